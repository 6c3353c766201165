#!/usr/bin/env python3
"""run-real.py: check one reference case of shared/real-graphs end to end.

    run-real.py SHARDCHECK SOURCE_ROOT CASE [--assume SPEC=EXPR[;EXPR]]...
                [--input-relation SPEC=TEXT]... [--expose SPEC=EXPR]...
    run-real.py SHARDCHECK SOURCE_ROOT --sheet FILE [options as above]

Converts relations/CASE.json (or, with --sheet, our own sheet FILE, e.g.
tests/real/sheets/*.json: a path relative to SOURCE_ROOT or absolute, whose
spec/impl paths are relative to the real-graphs root as in relations/) with
tools/fx2bundle.py into a temporary
directory (deleted afterwards: neither the data nor bundles made from it
enter the tree), runs `SHARDCHECK check --quiet --format json` on the
bundle and compares the result with what the sheet expects:

  expected_verdict "refines"  exit 0, and every expect_output_relation entry
                              found in the report's expectations;
  "fails", kind "unmapped"    exit 1, failure kind "unmapped" at the sheet's
                              bug_caught_at.node;
  "fails", kind "unexpected_relation"
                              exit 1, failure kind "unexpected_relation", the
                              spec node of bug_caught_at among the tensors
                              whose expectations were not found, and each
                              expression of expected_output_relation_found
                              for it among its relations found.

The layernorm case on its bw graph needs --assume-intermediates
(docs/real-captures.md, "Pruning"): a sheet whose conversion refuses
unmapped inputs inside the cone and lists entangle_assumed_intermediates is
converted again with it, and the test says so.  Our joint-graph sheet of
that case (tests/real/sheets/bug_missing_layernorm_allreduce-joint.json)
lists none, so it is checked without any assumption.

--assume SPEC=EXPR[;EXPR] adds a trusted relation to the converted bundle's
assume_relation (in the temporary directory only), for a variant of a case
that gets past a node another lemma set has yet to prove; the report lists
it among the assumptions, and so does this test's output.
--input-relation SPEC=TEXT (with kind "unmapped"): the failure's input
relations must give spec tensor SPEC the expression TEXT (the failure must
be for the right reason, e.g. an un-reduced partial sum).
--expose SPEC=EXPR checks an intermediate tensor too (as Entangle's
filter_output does): SPEC joins the spec's outputs and check_outputs
(first, so that the walk maps it before the sheet's node), the rank
tensors EXPR names join their ranks' outputs, and the report's output
relation of SPEC must contain EXPR, whatever the verdict.

Exit 0 pass, 1 fail (with the reason on stdout), 77 skipped (no data).
"""
import json
import os
import re
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


def options(rest):
    """--assume / --input-relation pairs: ({spec: [expr]}, [(spec, text)]) or None."""
    assume, inrel, expose = {}, [], []
    if len(rest) % 2:
        return None
    for flag, val in zip(rest[0::2], rest[1::2]):
        name, eq, text = val.partition("=")
        if not eq or not name or not text:
            return None
        if flag == "--assume":
            assume[name] = text.split(";")
        elif flag == "--input-relation":
            inrel.append((name, text))
        elif flag == "--expose":
            expose.append((name, text))
        else:
            return None
    return assume, inrel, expose


def main(argv):
    own = len(argv) >= 4 and argv[3] == "--sheet"
    first = 5 if own else 4
    opts = options(argv[first:]) if len(argv) >= first else None
    if opts is None:
        print(__doc__)
        return 2
    exe, root = argv[1], argv[2]
    assume, inrel, expose = opts
    rg = real_graphs(root)
    if rg is None:
        print("SKIP: real graphs not found (set SC_REAL_GRAPHS)")
        return 77
    if own:
        # our sheet is part of the tree: a missing or broken one is a failure
        sheet_path = os.path.join(root, argv[4])
        try:
            with open(sheet_path) as f:
                sheet = json.load(f)
        except (OSError, ValueError) as e:
            print(f"FAIL: cannot read the sheet {sheet_path}: {e}")
            return 1
        case = os.path.splitext(os.path.basename(sheet_path))[0]
        files = None
        if isinstance(sheet, dict) and all(isinstance(sheet.get(k), list) for k in ("spec", "impl")):
            files = sheet["spec"] + sheet["impl"]
        if not files or not all(isinstance(x, str) for x in files):
            print(f"FAIL: the sheet {sheet_path} must list its spec and impl dumps")
            return 1
        missing = [x for x in files if not os.path.isfile(os.path.join(rg, x))]
        if missing:
            print(f"SKIP: graph dumps not found under {rg}: {missing}")
            return 77
        print(f"# sheet {sheet_path} (case {case})")
    else:
        case = argv[3]
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
        if assume or expose:
            with open(bundle) as f:
                b = json.load(f)
            if assume:
                b.setdefault("assume_relation", {}).update(assume)
            for name, text in reversed(expose):
                if name not in b["spec"]["outputs"]:
                    b["spec"]["outputs"].append(name)
                for k, rank in enumerate(b["impl"]["ranks"]):
                    for t in re.findall(r"\br%d\.(\w+)" % k, text):
                        if t not in rank["outputs"]:
                            rank["outputs"].append(t)
                b["check_outputs"] = [name] + [c for c in b.get("check_outputs", []) if c != name]
                b.setdefault("expect_output_relation", {})[name] = [text]
            with open(bundle, "w") as f:
                json.dump(b, f)
            for k, v in assume.items():
                print(f"# ASSUMED (trusted, not proved): {k} = {' = '.join(v)}")
            for k, v in expose:
                print(f"# also checked: {k} = {v}")
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
    for name, text in expose:
        got = (rep.get("output_relation") or {}).get(name) or []
        if text not in got:
            print(f"FAIL: the exposed tensor {name} should map to {text}; got {got[:6]}")
            return 1
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
    for name, text in inrel:
        got = (fail.get("input_relation") or {}).get(name, [])
        if text not in got:
            print(f"FAIL: expected {name} = {text} among the input relations of {at}; "
                  f"got {got[:6]}")
            return 1
    if kind == "unexpected_relation":
        missing = {e.get("tensor") for e in rep.get("expectations", []) if not e.get("found")}
        if at not in missing:
            print(f"FAIL: expected the relation of {at} to differ from the expected one; "
                  f"unmet expectations: {sorted(missing)}")
            return 1
        # the relation the sheet says is found instead (the bug's signature:
        # an un-reduced sum of the ranks' gradients), spaces aside
        found = [e.replace(" ", "") for e in (rep.get("output_relation") or {}).get(at, [])]
        for want_expr in (sheet.get("expected_output_relation_found") or {}).get(at, []):
            if want_expr.replace(" ", "") not in found:
                print(f"FAIL: expected {at} = {want_expr} among the relations found; got "
                      f"{(rep.get('output_relation') or {}).get(at, [])[:6]}")
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
