#!/bin/sh
# keep-grown.sh — keep in the tree what a long fuzz run found: the inputs of
# a grown corpus that reach coverage the seeds and the kept corpus do not.
#
#   tests/fuzz/keep-grown.sh NAME [DIR...]
#
# NAME is a harness without its fuzz- prefix (sym, lemma, bundle, expr);
# DIR defaults to $FUZZ_WORK/NAME (default ./fuzz-work/NAME, where
# run-fuzz.sh grows it).  libFuzzer's -merge=1 (build-fuzz's harness,
# as run-fuzz.sh runs it) starts from the seeds tests/fuzz/corpus/NAME
# and the kept tests/fuzz/grown/NAME and adds the inputs of DIR that bring
# new coverage features; those are added to tests/fuzz/grown/NAME (named by
# their SHA-1, as libFuzzer names them).  run-fuzz.sh reads that folder
# with FUZZ_GROWN=1.  Prints "keep-grown: NAME: N inputs added, M kept".
set -eu
[ $# -ge 1 ] || { echo "usage: tests/fuzz/keep-grown.sh NAME [DIR...]"; exit 2; }
name=$1
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${FUZZ_BUILD:-$root/build-fuzz}
work=${FUZZ_WORK:-$root/fuzz-work}
[ $# -gt 0 ] || set -- "$work/$name"
harness="$build/tests/fuzz/fuzz-$name"
[ -x "$harness" ] || { echo "keep-grown: $harness: not built (run tests/fuzz/run-fuzz.sh first)"; exit 2; }
kept="$root/tests/fuzz/grown/$name"
mkdir -p "$kept"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$root/tests/fuzz/corpus/$name"/* "$kept"/* "$tmp"/ 2>/dev/null || true
ls "$tmp" | sort >"$tmp.before"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export SC_LEMMA_DIR="$root/lemmas"
export SC_LEMMA_CACHE=0
nice "$build/tests/fuzz/fuzz-$name" -merge=1 -timeout=60 -rss_limit_mb=2048 -max_len=8192 \
  "$tmp" "$@" >"$tmp.log" 2>&1 || { echo "keep-grown: the merge failed (log $tmp.log)"; trap - EXIT; exit 1; }
ls "$tmp" | sort | comm -13 "$tmp.before" - >"$tmp.new"
while read -r f; do cp "$tmp/$f" "$kept/$f"; done <"$tmp.new"
echo "keep-grown: $name: $(wc -l <"$tmp.new") inputs added, $(ls "$kept" | wc -l) kept"
rm -f "$tmp.before" "$tmp.new" "$tmp.log"
