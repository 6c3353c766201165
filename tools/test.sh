#!/usr/bin/env bash
# test.sh — build shardcheck under AddressSanitizer and UndefinedBehaviorSanitizer
# (in ./build-test) and run every test; the last line is "N passed, N failed",
# counting each GTest case (TAP line) and each plain test.
#   tools/test.sh             every suite
#   tools/test.sh SUITE...    only these meson suites (unit, bundles, ...)
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${SC_TEST_BUILD_DIR:-build-test}
if [ ! -d "$dir" ]; then
  meson setup "$dir" --buildtype=debug -Db_sanitize=address,undefined >/dev/null || exit 2
fi
ninja -C "$dir" || { echo "0 passed, 1 failed"; exit 1; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# cvc5's number library (libcln) allocates once at load and never frees.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}
suites=()
for s in "$@"; do suites+=(--suite "$s"); done
meson test -C "$dir" --print-errorlogs --num-processes 2 ${suites[@]+"${suites[@]}"}
status=$?
python3 tools/count-tests.py "$dir/meson-logs/testlog.json"
count_status=$?
[ $status -eq 0 ] && [ $count_status -eq 0 ]
