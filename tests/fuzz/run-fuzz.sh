#!/bin/sh
# run-fuzz.sh — run every libFuzzer harness of tests/fuzz for a bounded time.
#
#   tests/fuzz/run-fuzz.sh [SECONDS [HARNESS...]]
#
# Builds ./build-fuzz (clang, -Dfuzz=enabled, ASan+UBSan) when it is missing,
# then runs each harness (default: all four) for SECONDS (default 60) on a
# copy of its seed corpus tests/fuzz/corpus/NAME, niced, one at a time.  The
# grown corpora and any crash artifacts go to $FUZZ_WORK (default
# ./fuzz-work, outside the source tree's corpus).  With FUZZ_GROWN=1 each
# harness also reads the grown corpus kept in the tree, tests/fuzz/grown/NAME
# (read only: libFuzzer writes new inputs to the first folder only; update
# it with tests/fuzz/keep-grown.sh).  Prints one line per harness
# with its executions and coverage, then "fuzz: P passed, F failed" (one
# test per harness; .ci/run adds it to the suite's count); exits 1 when a
# harness found something (crash, leak, sanitizer report, timeout), naming
# the artifact, or when the fuzz build failed.  Needs clang and its
# sanitizer/fuzzer runtime (Debian: clang, libclang-rt-14-dev;
# tools/setup.sh --deps --fuzz).
set -u
secs=${1:-60}
[ $# -gt 0 ] && shift
harnesses=${*:-fuzz-expr fuzz-sym fuzz-bundle fuzz-lemma}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${FUZZ_BUILD:-$root/build-fuzz}
work=${FUZZ_WORK:-$root/fuzz-work}
n=0
for h in $harnesses; do n=$((n + 1)); done
built=1
if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ meson setup "$build" "$root" -Dfuzz=enabled \
    -Db_sanitize=address,undefined -Db_lundef=false --buildtype=debugoptimized || built=0
fi
targets=""
for h in $harnesses; do targets="$targets tests/fuzz/$h"; done
[ $built -eq 1 ] && { nice ninja -C "$build" $targets || built=0; }
if [ $built -eq 0 ]; then
  echo "run-fuzz: the fuzz build failed (needs clang and libclang-rt-14-dev)"
  echo "fuzz: 0 passed, $n failed"
  exit 1
fi
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export SC_LEMMA_DIR="$root/lemmas"
export SC_LEMMA_CACHE=0 # every input runs the whole lemma check
passed=0
failed=0
for h in $harnesses; do
  name=${h#fuzz-}
  mkdir -p "$work/$name" "$work/artifacts-$name"
  log="$work/$h.log"
  grown=
  [ "${FUZZ_GROWN:-0}" = 1 ] && [ -d "$root/tests/fuzz/grown/$name" ] && grown="$root/tests/fuzz/grown/$name"
  if nice "$build/tests/fuzz/$h" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
      -max_len=8192 -print_final_stats=1 -artifact_prefix="$work/artifacts-$name/" \
      "$work/$name" "$root/tests/fuzz/corpus/$name" $grown >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1 |
      sed -n 's/.*cov: \([0-9]*\) ft: \([0-9]*\).*/cov \1, ft \2/p')
    echo "$h: ${execs:-?} executions in ${secs} s (${cov:-cov ?}), no finding"
    passed=$((passed + 1))
  else
    echo "$h: FINDING (log $log):"
    grep -E "^(==[0-9]+==ERROR|SUMMARY|.*runtime error|artifact_prefix|Test unit written)" "$log" | head -5
    failed=$((failed + 1))
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ $failed -eq 0 ]
