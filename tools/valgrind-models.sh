#!/usr/bin/env bash
# valgrind-models.sh — run `shardcheck check` under valgrind's memcheck on
# every bundle of models/ that tests/models/verdicts.json lists (issue 19:
# valgrind stays clean on the models).
#
#   tools/valgrind-models.sh [-j JOBS] [--all] [--skip-done FILE] [BUNDLE...]
#
# Builds ./build-valgrind (debugoptimized, no sanitizer: valgrind and ASan
# do not mix) when it is missing, then checks each bundle (default: every
# models/ entry of verdicts.json; --all: every entry of verdicts.json,
# models/ and tests/, then every bundle of the loader's corpus
# tests/bundles/{accept,reject}, smallest file first), JOBS at a time (default 2), niced, with
# the model's own lemma folder when it has *.lemma files (as
# tests/models/run-model.py does).  A run passes when memcheck reports no
# error (invalid read or write, use of an uninitialised value, invalid free,
# a definitely lost block: --error-exitcode=99) and the exit code is the
# verdict's (0 refines, 1 fails, 3 limit).  A corpus bundle of
# tests/bundles/ is checked with the built-in lemma files only (it uses
# registry operators only); a rejected one must exit with
# the code of its .expect sidecar, an accepted one (no verdict recorded)
# with the code the same build gives it natively.  tests/valgrind.supp suppresses CLN's
# (cvc5's number library) one allocation at load, as tests/lsan.supp does.
# Logs go to $VALGRIND_WORK (default ./build-valgrind/memcheck).  Prints one
# line per bundle as it ends (also appended to $VALGRIND_WORK/results.txt)
# and then "valgrind: P passed, F failed" for this run; exits 1 when any
# failed.  --skip-done FILE resumes a run cut short: a bundle with an "ok"
# line in FILE (a results.txt, or one bundle path per line) is not run
# again; FAIL lines are run again.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=2
all=0
if [ "${1:-}" = "-j" ]; then jobs=$2; shift 2; fi
if [ "${1:-}" = "--all" ]; then all=1; shift; fi
done_file=
if [ "${1:-}" = "--skip-done" ]; then done_file=$2; shift 2; fi
[ -z "$done_file" ] || [ -r "$done_file" ] || { echo "valgrind-models: $done_file: cannot read"; exit 2; }
build=${VALGRIND_BUILD:-$root/build-valgrind}
work=${VALGRIND_WORK:-$build/memcheck}
command -v valgrind >/dev/null || { echo "valgrind-models: valgrind is not installed (apt-get install valgrind)"; exit 2; }
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$root" --buildtype=debugoptimized >/dev/null || exit 2
fi
nice ninja -C "$build" src/cli/shardcheck >/dev/null || { echo "valgrind-models: build failed"; exit 2; }
mkdir -p "$work"

# BUNDLE VERDICT lines (VERDICT: refines, fails, limit, exit:N, or native)
if [ "$all" = 1 ]; then
  list=$(/usr/bin/python3 -c '
import glob, json, os, sys
root = sys.argv[1]
rows = [(b, v["verdict"]) for b, v in
        json.load(open(os.path.join(root, "tests/models/verdicts.json"))).items()]
for kind in ("accept", "reject"):
    for f in sorted(glob.glob(os.path.join(root, "tests/bundles", kind, "*.json"))):
        expect = f[:-5] + ".expect"
        rows.append((os.path.relpath(f, root), "exit:" + open(expect).readline().strip()
                     if os.path.exists(expect) else "native"))
# smallest file first: a run cut short has covered the most bundles
rows.sort(key=lambda r: os.path.getsize(os.path.join(root, r[0])))
for b, v in rows:
    print(b, v)' "$root")
elif [ $# -gt 0 ]; then
  list=$(/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for b in sys.argv[2:]:
    print(b, d.get(b, {}).get("verdict", "refines"))' "$root/tests/models/verdicts.json" "$@")
else
  list=$(/usr/bin/python3 -c '
import json, sys
for b, v in json.load(open(sys.argv[1])).items():
    if b.startswith("models/"):
        print(b, v["verdict"])' "$root/tests/models/verdicts.json")
fi

if [ -n "$done_file" ]; then
  # "ok   BUNDLE (...)" lines of a results.txt, or bare bundle paths
  list=$(/usr/bin/python3 -c '
import sys
done = set()
for line in open(sys.argv[1]):
    w = line.split()
    if len(w) >= 2 and w[0] == "ok":
        done.add(w[1])
    elif len(w) == 1:
        done.add(w[0])
rows = [l for l in sys.stdin.read().splitlines() if l.strip()]
left = [l for l in rows if l.split()[0] not in done]
print("valgrind-models: %d of %d bundles done in %s, %d to run"
      % (len(rows) - len(left), len(rows), sys.argv[1], len(left)), file=sys.stderr)
print("\n".join(left))' "$done_file" <<<"$list")
fi

one() {
  local bundle=$1 verdict=$2 want lemmas=() log rc t0
  local folder lemma_dir="$root/lemmas"
  folder=$(dirname "$root/$bundle")
  case $bundle in
    tests/bundles/*) ;;
    *) compgen -G "$folder/*.lemma" >/dev/null && lemmas=(--lemmas "$folder") ;;
  esac
  case $verdict in
    refines) want=0 ;; fails) want=1 ;; exit:*) want=${verdict#exit:} ;;
    native)
      SC_LEMMA_DIR="$lemma_dir" SC_LEMMA_CACHE="$work/lemma-cache" \
        "$build/src/cli/shardcheck" check --quiet "$root/$bundle" >/dev/null 2>&1
      want=$? ;;
    *) want=3 ;;
  esac
  log="$work/$(echo "$bundle" | tr / -).log"
  t0=$SECONDS
  # memcheck runs 20-50 times slower: each saturation's wall-clock limit
  # (SC_TIME_LIMIT, 5 s) would turn a verdict into "limit", and cvc5's
  # wall-clock limit per query (SC_SMT_TLIMIT_MS, 500 ms) an oracle's
  # answer into unknown (tests/models/symbolic/oracle-load.json: exit 2)
  SC_TIME_LIMIT=${SC_TIME_LIMIT:-600} SC_SMT_TLIMIT_MS=${SC_SMT_TLIMIT_MS:-60000} SC_LEMMA_DIR="$lemma_dir" SC_LEMMA_CACHE="$work/lemma-cache" nice valgrind --tool=memcheck --error-exitcode=99 \
    --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
    --num-callers=30 --suppressions="$root/tests/valgrind.supp" --log-file="$log" \
    "$build/src/cli/shardcheck" check --quiet "${lemmas[@]}" "$root/$bundle" >/dev/null 2>&1
  rc=$?
  local errs
  errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$log" | tail -1)
  if [ "$rc" -eq "$want" ] && [ "${errs:-x}" = 0 ]; then
    echo "ok   $bundle ($verdict, $((SECONDS - t0)) s, 0 errors)"
  else
    echo "FAIL $bundle: exit $rc (want $want), memcheck errors ${errs:-?} (log $log)"
  fi
}
export -f one
export root build work
# one line per bundle as it finishes (also appended to $work/results.txt)
run_log=$(mktemp)
[ -z "$list" ] || echo "$list" | xargs -P "$jobs" -L 1 bash -c 'one "$0" "$1"' |
  tee "$run_log" | tee -a "$work/results.txt"
passed=$(grep -c '^ok ' "$run_log")
failed=$(grep -c '^FAIL' "$run_log")
rm -f "$run_log"
echo "valgrind: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && { [ "$passed" -gt 0 ] || [ -z "$list" ]; }
