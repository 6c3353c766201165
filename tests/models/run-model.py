#!/usr/bin/env python3
"""run-model.py — `shardcheck check` one bundle and compare with its expected verdict.

usage: run-model.py SHARDCHECK ROOT BUNDLE VERDICT [NODE]

Runs `check --format json` (the spec's result object) and `check` (text):
both must agree with VERDICT (refines / fails), exit with its code (0 / 1),
and for a failure name NODE as the failing spec node (kind unmapped) or,
for kind unexpected_relation, report the missing expectation.  The text
report must start with "NAME: VERDICT".  Exit 0 pass, 1 fail."""
import json
import os
import subprocess
import sys

CODES = {"refines": 0, "fails": 1, "limit": 3}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    exe, root, bundle, verdict = sys.argv[1:5]
    node = sys.argv[5] if len(sys.argv) > 5 else None
    path = os.path.join(root, bundle)
    r = subprocess.run([exe, "check", "--quiet", "--format", "json", path],
                       capture_output=True, text=True, timeout=600)
    print("exit:", r.returncode)
    print("stdout:", r.stdout[:4000])
    print("stderr:", r.stderr[:4000])
    try:
        obj = json.loads(r.stdout)
    except ValueError as e:
        fail(f"output does not parse: {e}")
    if obj.get("verdict") != verdict:
        fail(f"verdict {obj.get('verdict')}, expected {verdict}")
    if r.returncode != CODES[verdict]:
        fail(f"exit code {r.returncode}, expected {CODES[verdict]}")
    for key in ("output_relation", "failure", "stats"):
        if key not in obj:
            fail(f"result object lacks '{key}'")
    if verdict == "refines":
        for t, exprs in obj["output_relation"].items():
            if not exprs:
                fail(f"refines but output {t} has no expression")
    if verdict == "fails":
        f = obj.get("failure") or {}
        if node is not None and f.get("node", f.get("tensor")) != node:
            fail(f"failure at {f.get('node', f.get('tensor'))}, expected {node}")
        if f.get("kind") == "unmapped":
            for key in ("op", "unmapped", "input_relation", "nearest"):
                if key not in f:
                    fail(f"failure lacks '{key}'")
    t = subprocess.run([exe, "check", "--quiet", path], capture_output=True, text=True,
                       timeout=600)
    if t.returncode != r.returncode:
        fail(f"text run exit {t.returncode} differs from json run {r.returncode}")
    first = t.stdout.splitlines()[0] if t.stdout else ""
    if not first.endswith(": " + verdict):
        fail(f"text report starts with {first!r}")
    print("PASS")


if __name__ == "__main__":
    main()
