#!/bin/sh
# compare-results.sh — are a speed-up's results byte-identical?  Records the
# results of one shardcheck binary on every bundle of models/ and tests/ and
# on the real captures, with the times removed, and diffs two records.
#
# usage: tools/bench/compare-results.sh record SHARDCHECK OUTDIR [EXTRA_DIR...]
#        tools/bench/compare-results.sh diff OUTDIR_BEFORE OUTDIR_AFTER
#
# record: every models/**/*.json and tests/**/*.json bundle (the loader's
# reject corpus included: its error text and exit code are results too) is
# checked with `--format json` and, for models/, also with
# `--explain=all --format json` (the proof forest's path); a model folder
# with *.lemma files gets `--lemmas` on it, as tools/bench/models.py does.
# The real captures of $SC_REAL_GRAPHS (default ../shared/real-graphs next to
# the source root, i.e. /work/shared/real-graphs) are converted once by
# tools/fx2bundle.py --sheet-only, as tools/bench/real.py converts them
# (with --assume-intermediates where plain conversion is refused), into
# $SC_COMPARE_CACHE (default /tmp/sc-compare-real) and checked the same way;
# each EXTRA_DIR is a folder of captures with sheet.json (e.g. the synthetic
# captures of tools/bench/scale-capture.py) converted and checked likewise.
# Each result is stdout with "seconds" and "*_seconds" fields deleted, plus
# the exit code.
# Run with `nice`: it takes a few minutes of CPU.
#
# diff: `diff -r` of two records; exit 0 when identical, 1 otherwise.
# diff-common: the same over the results present in both (a record cut
# short: the captures come first, then models/ and tests/ in name order).
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
# a saturation stops after SC_TIME_LIMIT seconds of wall time (5 by default):
# on a loaded machine that would make results depend on the load
export SC_TIME_LIMIT="${SC_TIME_LIMIT:-600}"

strip_times() {
  # every "seconds" or "*_seconds" member (oracle_seconds), at any depth,
  # and nothing else
  "$PY" -c '
import json, sys
text = sys.stdin.read()
try:
    d = json.loads(text)
except ValueError:
    sys.stdout.write(text)
    sys.exit(0)
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items()
                if k != "seconds" and not k.endswith("_seconds")}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
json.dump(strip(d), sys.stdout, indent=1, sort_keys=False)
sys.stdout.write("\n")
'
}

# check_one EXE BUNDLE OUTFILE [ARGS...]  (sh has no locals: c_* names)
check_one() {
  c_exe=$1 c_bundle=$2 c_out=$3
  shift 3
  c_lem=""
  c_dir=$(dirname "$c_bundle")
  if ls "$c_dir"/*.lemma >/dev/null 2>&1; then c_lem="--lemmas $c_dir"; fi
  set +e
  # shellcheck disable=SC2086
  "$c_exe" check --quiet --format json $c_lem "$@" "$c_bundle" >"$c_out.raw" 2>"$c_out.err"
  c_code=$?
  set -e
  strip_times <"$c_out.raw" >"$c_out"
  echo "exit $c_code" >>"$c_out"
  # stderr too (error texts): any "N s" figure in it masked
  sed 's/[0-9][0-9.]* s\b/T s/g' "$c_out.err" >>"$c_out"
  rm -f "$c_out.raw" "$c_out.err"
}

convert_captures() { # SHEET ROOT OUTBUNDLE
  if [ -s "$3" ]; then return 0; fi
  if ! "$PY" "$ROOT/tools/fx2bundle.py" --sheet-only "$1" --root "$2" -o "$3" 2>/dev/null; then
    "$PY" "$ROOT/tools/fx2bundle.py" --sheet-only "$1" --root "$2" -o "$3" \
      --assume-intermediates 2>/dev/null || rm -f "$3"
  fi
}

record() {
  exe=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
  out=$2
  shift 2
  mkdir -p "$out"
  cd "$ROOT"
  n=0
  # the real and synthetic captures first: the most telling results
  rg=${SC_REAL_GRAPHS:-$ROOT/../shared/real-graphs}
  [ -d "$rg/relations" ] || rg=/work/shared/real-graphs
  cache=${SC_COMPARE_CACHE:-/tmp/sc-compare-real}
  mkdir -p "$cache"
  if [ -d "$rg/relations" ]; then
    for s in "$rg"/relations/*.json "$ROOT"/tests/real/sheets/*.json; do
      base=$(basename "$s" .json)
      convert_captures "$s" "$rg" "$cache/$base.json"
      [ -s "$cache/$base.json" ] || { echo "real $base: not convertible" >"$out/real_$base"; continue; }
      check_one "$exe" "$cache/$base.json" "$out/real_$base"
      check_one "$exe" "$cache/$base.json" "$out/real_$base.explain" --explain=all
      n=$((n + 1))
    done
  fi
  for d in "$@"; do
    base=$(basename "$d")
    convert_captures "$d/sheet.json" "$d" "$cache/extra-$base.json"
    check_one "$exe" "$cache/extra-$base.json" "$out/extra_$base"
    n=$((n + 1))
  done
  for b in $(find models tests -name '*.json' | LC_ALL=C sort); do
    name=$(echo "$b" | tr / _)
    check_one "$exe" "$b" "$out/$name"
    case $b in
      models/*) check_one "$exe" "$b" "$out/$name.explain" --explain=all ;;
    esac
    n=$((n + 1))
  done
  echo "recorded $n bundles into $out"
}

case ${1:-} in
  record)
    [ $# -ge 3 ] || { echo "usage: $0 record SHARDCHECK OUTDIR [EXTRA_DIR...]" >&2; exit 2; }
    shift
    record "$@"
    ;;
  diff)
    [ $# -eq 3 ] || { echo "usage: $0 diff BEFORE AFTER" >&2; exit 2; }
    # -I: records made before *_seconds members were stripped
    if diff -r -I '_seconds": ' "$2" "$3"; then
      echo "identical: $(ls "$2" | wc -l) results"
    else
      exit 1
    fi
    ;;
  diff-common)
    [ $# -eq 3 ] || { echo "usage: $0 diff-common BEFORE AFTER" >&2; exit 2; }
    n=0 bad=0
    for f in "$3"/*; do
      g="$2/$(basename "$f")"
      [ -f "$g" ] || continue
      n=$((n + 1))
      case $f in *.raw | *.err) continue ;; esac
      diff -q -I '_seconds": ' "$g" "$f" >/dev/null || { echo "differs: $(basename "$f")"; bad=$((bad + 1)); }
    done
    echo "$n results in both, $bad differ"
    [ $bad -eq 0 ]
    ;;
  *)
    echo "usage: $0 record SHARDCHECK OUTDIR [EXTRA_DIR...] | diff BEFORE AFTER | diff-common BEFORE AFTER" >&2
    exit 2
    ;;
esac
