#!/usr/bin/env python3
"""run-validate.py — `shardcheck check --validate` on every model of
tests/models/verdicts.json, and on the planted wrong relation.

usage: run-validate.py SHARDCHECK ROOT [--all]

For each model: the exit code is that of the verdict reached (0 refines,
1 fails, 3 limit; never 4 — whether it is the one verdicts.json expects is
tests/models' business), the text report has a validation section in which every relation holds
("N of N relations hold"), the JSON object has "validation" with status
"validated" and failed 0; a failing model shows a counterexample with an
index where the two sides differ.  tests/lemcheck/wrong-assume.json (an
assume_relation that is false on purpose) must exit 4 with "SOUNDNESS BUG".
With --all, every bundle under models/ instead: whatever its verdict, the
exit code is not 4 (nor 2) and every relation holds.
Prints 'N passed, N failed'; exit 0 when nothing failed."""
import json
import os
import re
import subprocess
import sys

CODES = {"refines": 0, "fails": 1, "limit": 3}


def lemma_args(path):
    """--lemmas FOLDER when the bundle's folder holds *.lemma files (the
    custom kernels a model declares, models/custom-kernel)."""
    folder = os.path.dirname(os.path.abspath(path))
    return ["--lemmas", folder] if any(n.endswith(".lemma") for n in os.listdir(folder)) else []


def run(exe, *args):
    r = subprocess.run([exe, "check", "--quiet", "--validate", *lemma_args(args[-1]), *args],
                       capture_output=True, text=True, timeout=900)
    return r.returncode, r.stdout, r.stderr


# Validation is skipped, with a note, for a graph that calls a kernel the
# interpreter cannot run (declared without a definition, or with several
# results: vLLM's rotary and attention kernels).  That is reported, not a
# relation that fails; every other skip is an error here.
NO_EVALUATOR = re.compile(r"^validation skipped: .*(has no evaluator|has no definition|"
                          r"has \d+ results: only single-result declared operators)", re.M)


def check_model(exe, path, verdict, errors, prover_limit=False):
    # The verdict itself is the models suite's business (tests/models): here
    # the exit code must be the verdict actually reached, never 4 (nor 2).
    code, out, err = run(exe, "--format", "json", path)
    try:
        obj = json.loads(out)
    except ValueError:
        errors.append(f"{path}: json run: exit {code}, output does not parse\n{err[-1000:]}")
        return
    got = obj.get("verdict")
    if got != verdict:
        print(f"note {path}: verdict {got}, verdicts.json says {verdict} (not checked here)")
    v = obj.get("validation") or {}
    if code == CODES.get(got, -1) and v.get("status") != "validated" and \
            NO_EVALUATOR.search("validation skipped: " + str(v.get("reason", v.get("note", "")))):
        print(f"note {path}: validation skipped: {v.get('reason', v.get('note', ''))}")
        return
    if code != CODES.get(got, -1) or v.get("status") != "validated" or v.get("failed") != 0:
        errors.append(f"{path}: json run: exit {code}, validation {json.dumps(v)[:500]}")
    # a model that really is wrong (verdicts.json: fails) shows where; one
    # that shardcheck fails to prove has no differing counterexample
    # (an entry with "undecided" conditions fails because a side condition
    # cannot be decided, not because the model is wrong: nothing differs)
    if verdict == "fails" == got and not prover_limit and not any(
            c.get("differs") and c.get("index") for c in v.get("counterexamples", [])):
        errors.append(f"{path}: json run: no counterexample with an index")
    code, out, err = run(exe, path)
    if code != CODES.get(got, -1):
        errors.append(f"{path}: exit {code} for verdict {got}\n{out[-2000:]}{err[-1000:]}")
        return
    m = re.search(r"^validation \(seed \d+[^)]*\): (\d+) of (\d+) relations hold", out, re.M)
    if not m or m.group(1) != m.group(2) or int(m.group(2)) == 0:
        errors.append(f"{path}: no clean validation line:\n{out[-2000:]}")
        return
    if "SOUNDNESS BUG" in out:
        errors.append(f"{path}: SOUNDNESS BUG reported")
    if verdict == "fails" == got and not prover_limit and \
            not re.search(r"^counterexample .*\n  differ at \[", out, re.M):
        errors.append(f"{path}: fails without a counterexample that differs:\n{out[-2000:]}")


def check_any(exe, path, errors):
    code, out, err = run(exe, path)
    if code in (0, 1, 3) and NO_EVALUATOR.search(out):
        print(f"note {path}: {NO_EVALUATOR.search(out).group(0)}")
        return
    m = re.search(r"^validation \(seed \d+[^)]*\): (\d+) of (\d+) relations hold", out, re.M)
    if code not in (0, 1, 3) or "SOUNDNESS BUG" in out or not m or m.group(1) != m.group(2):
        errors.append(f"{path}: exit {code}\n{out[-3000:]}{err[-1000:]}")


def main_all(exe, root):
    errors, n = [], 0
    for d in sorted(os.listdir(os.path.join(root, "models"))):
        full = os.path.join(root, "models", d)
        for f in sorted(os.listdir(full)) if os.path.isdir(full) else []:
            if f.endswith(".json"):
                n += 1
                before = len(errors)
                check_any(exe, os.path.join(full, f), errors)
                print(("ok   " if len(errors) == before else "FAIL ") + f"models/{d}/{f}")
    for e in errors:
        print("FAIL: " + e)
    print(f"{n - len(errors)} passed, {len(errors)} failed")
    sys.exit(1 if errors else 0)


def main():
    exe, root = sys.argv[1:3]
    if len(sys.argv) > 3 and sys.argv[3] == "--all":
        main_all(exe, root)
    verdicts = json.load(open(os.path.join(root, "tests", "models", "verdicts.json")))
    errors, n = [], 0
    for rel, want in verdicts.items():
        n += 1
        before = len(errors)
        check_model(exe, os.path.join(root, rel), want["verdict"], errors,
                    prover_limit=bool(want.get("undecided")))
        print(("ok   " if len(errors) == before else "FAIL ") + rel)
    n += 1
    planted = os.path.join(root, "tests", "lemcheck", "wrong-assume.json")
    code, out, err = run(exe, planted)
    ok = (code == 4 and "SOUNDNESS BUG: the assumed relation h = cat(h_1, h_0, dim=1) does not "
          "hold" in out and "SOUNDNESS BUG" in err)
    if not ok:
        errors.append(f"{planted}: exit {code}, expected 4 with SOUNDNESS BUG\n{out[-2000:]}")
    print(("ok   " if ok else "FAIL ") + "wrong-assume (planted)")
    for e in errors:
        print("FAIL: " + e)
    failed = len({e.split(":")[0] for e in errors})
    print(f"{n - failed} passed, {failed} failed")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
