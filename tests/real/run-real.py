#!/usr/bin/env python3
"""run-real.py: check one reference case of shared/real-graphs end to end.

    run-real.py SHARDCHECK SOURCE_ROOT CASE

Converts relations/CASE.json with tools/fx2bundle.py into a temporary
directory (deleted afterwards: neither the data nor bundles made from it
enter the tree), runs `SHARDCHECK check --quiet --format json` on the
bundle and compares the result with what the sheet expects:

  expected_verdict "refines"  exit 0, and every expect_output_relation entry
                              found in the report's expectations;
  "fails", kind "unmapped"    exit 1, failure kind "unmapped" at the sheet's
                              bug_caught_at.node;
  "fails", kind "unexpected_relation"
                              exit 1, failure kind "unexpected_relation", and
                              the spec node of bug_caught_at among the
                              tensors whose expectations were not found.

The layernorm case needs --assume-intermediates (docs/real-captures.md,
"Pruning"): a sheet whose conversion refuses unmapped inputs inside the
cone and lists entangle_assumed_intermediates is converted again with it,
and the test says so.

Exit 0 pass, 1 fail (with the reason on stdout), 77 skipped (no data).
"""
import json
import os
import subprocess
import sys
import tempfile


def real_graphs(root):
    d = os.environ.get("SC_REAL_GRAPHS") or os.path.join(root, "..", "shared", "real-graphs")
    return d if os.path.isdir(os.path.join(d, "relations")) else None


def convert(root, rg, sheet, out, assume):
    cmd = [sys.executable, os.path.join(root, "tools", "fx2bundle.py"), "--sheet-only", sheet,
           "--root", rg, "-o", out]
    if assume:
        cmd.append("--assume-intermediates")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def main(argv):
    if len(argv) != 4:
        print(__doc__)
        return 2
    exe, root, case = argv[1], argv[2], argv[3]
    rg = real_graphs(root)
    if rg is None:
        print("SKIP: real graphs not found (set SC_REAL_GRAPHS)")
        return 77
    sheet_path = os.path.join(rg, "relations", case + ".json")
    if not os.path.isfile(sheet_path):
        print(f"SKIP: no relation sheet {sheet_path}")
        return 77
    with open(sheet_path) as f:
        sheet = json.load(f)
    with tempfile.TemporaryDirectory(prefix="sc-real-") as tmp:
        bundle = os.path.join(tmp, case + ".json")
        r = convert(root, rg, sheet_path, bundle, False)
        if r.returncode == 2 and sheet.get("entangle_assumed_intermediates"):
            print("# converted with --assume-intermediates (the sheet's assumed intermediates)")
            r = convert(root, rg, sheet_path, bundle, True)
        if r.returncode != 0:
            print(f"FAIL: fx2bundle exited {r.returncode}: {r.stderr.strip()}")
            return 1
        c = subprocess.run([exe, "check", "--quiet", "--format", "json", bundle],
                           capture_output=True, text=True, timeout=550)
    print(f"# shardcheck exit {c.returncode}")
    try:
        rep = json.loads(c.stdout)
    except ValueError:
        print(f"FAIL: no JSON report; stderr: {c.stderr.strip()[:2000]}")
        return 1
    print("# report: " + json.dumps(rep)[:4000])
    fail = rep.get("failure") or {}
    want = sheet.get("expected_verdict")
    if want == "refines":
        if c.returncode != 0 or rep.get("verdict") != "refines":
            print(f"FAIL: expected refines, got {rep.get('verdict')} (exit {c.returncode}) "
                  f"at {fail.get('node')} ({fail.get('op')}), kind {fail.get('kind')}")
            return 1
        missing = [e for e in rep.get("expectations", []) if not e.get("found")]
        if missing:
            print(f"FAIL: refines but expected relations not found: {missing}")
            return 1
        return 0
    kind = sheet.get("expected_failure_kind")
    at = (sheet.get("bug_caught_at") or {}).get("node")
    if c.returncode != 1 or rep.get("verdict") != "fails":
        print(f"FAIL: expected fails ({kind} at {at}), got {rep.get('verdict')} (exit {c.returncode})")
        return 1
    if fail.get("kind") != kind:
        print(f"FAIL: expected failure kind {kind} at {at}, got {fail.get('kind')} at "
              f"{fail.get('node')} ({fail.get('op')})")
        return 1
    if kind == "unmapped" and fail.get("node") != at:
        print(f"FAIL: expected the first unmapped node {at}, got {fail.get('node')} "
              f"({fail.get('op')}); nearest: {fail.get('nearest', [])[:3]}")
        return 1
    if kind == "unexpected_relation":
        missing = {e.get("tensor") for e in rep.get("expectations", []) if not e.get("found")}
        if at not in missing:
            print(f"FAIL: expected the relation of {at} to differ from the expected one; "
                  f"unmet expectations: {sorted(missing)}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
