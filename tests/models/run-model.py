#!/usr/bin/env python3
"""run-model.py — `shardcheck check` one bundle and compare with its expected verdict.

usage: run-model.py SHARDCHECK ROOT BUNDLE VERDICT [NODE]

Runs `check --format json` (the spec's result object) and `check` (text):
both must agree with VERDICT (refines / fails), exit with its code (0 / 1),
and for a failure name NODE as the failing spec node (kind unmapped) or,
for kind unexpected_relation, report the missing expectation.  The text
report must start with "NAME: VERDICT".  Exit 0 pass, 1 fail.

Optional keys of the bundle's entry in tests/models/verdicts.json:
  "undecided": [TEXT, ...]   each TEXT must occur in one entry of the JSON
                             failure's "undecided" list and in the text report
                             (lemma names, conditions: an undecided side
                             condition must be named);
  "load_needs_oracle": true  `shardcheck show` (no oracle) must refuse the
                             bundle ("cannot prove them equal") and the check's
                             stats.symbolic.loading must count a cvc5 call;
  "twin": BUNDLE             the concrete twin of a symbolic bundle: its check
                             must give the same output relation and, for a
                             failure, the same kind and node;
  "stopped_at": NODE         the failure was reported at a deferred node and
                             the walk stopped at NODE: the JSON failure's
                             "stopped_at" and the text report must name it
                             (a backward bug reported at a forward node that
                             was deferred is found where the walk ended);
  "over_intermediates": true the failing output maps only through impl
                             intermediates: the JSON failure's
                             "found_over_intermediates" lists relations.
A failure without that key must not list any.
  "refuted": true            the walk stopped at a limit and an expected output
                             relation differs on the values (src/infer/refuted.c):
                             the JSON failure's "refuted" is set and the text
                             report says so.  A result without that key must
                             not have one."""
import json
import os
import subprocess
import sys

CODES = {"refines": 0, "fails": 1, "limit": 3}


def lemma_args(path):
    """--lemmas FOLDER when the bundle's folder holds *.lemma files (the
    custom kernels a model declares, models/custom-kernel)."""
    folder = os.path.dirname(os.path.abspath(path))
    return ["--lemmas", folder] if any(n.endswith(".lemma") for n in os.listdir(folder)) else []


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    exe, root, bundle, verdict = sys.argv[1:5]
    node = sys.argv[5] if len(sys.argv) > 5 else None
    path = os.path.join(root, bundle)
    r = subprocess.run([exe, "check", "--quiet", "--format", "json", *lemma_args(path), path],
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
    t = subprocess.run([exe, "check", "--quiet", *lemma_args(path), path], capture_output=True, text=True,
                       timeout=600)
    if t.returncode != r.returncode:
        fail(f"text run exit {t.returncode} differs from json run {r.returncode}")
    first = t.stdout.splitlines()[0] if t.stdout else ""
    if not first.endswith(": " + verdict):
        fail(f"text report starts with {first!r}")
    extra = json.load(open(os.path.join(root, "tests", "models", "verdicts.json"))).get(bundle, {})
    for want in extra.get("undecided", []):
        und = (obj.get("failure") or {}).get("undecided") or []
        if not any(want in u for u in und):
            fail(f"no undecided entry names {want!r}: {und}")
        if want not in t.stdout:
            fail(f"the text report does not name the undecided {want!r}")
    over = (obj.get("failure") or {}).get("found_over_intermediates")
    if extra.get("over_intermediates") and not over:
        fail("the failure lists no found_over_intermediates")
    if not extra.get("over_intermediates") and over:
        fail(f"unexpected found_over_intermediates: {over[:3]}")
    refuted = (obj.get("failure") or {}).get("refuted")
    if extra.get("refuted") and (not refuted or "the values refute" not in t.stdout):
        fail(f"no refutation in the JSON failure or the text report: {refuted}")
    if not extra.get("refuted") and refuted:
        fail(f"unexpected refutation: {refuted}")
    if "stopped_at" in extra:
        got = (obj.get("failure") or {}).get("stopped_at")
        if got != extra["stopped_at"]:
            fail(f"the walk stopped at {got}, expected {extra['stopped_at']}")
        if f"stopped at {extra['stopped_at']} (" not in t.stdout:
            fail(f"the text report does not say where the walk stopped")
    if extra.get("load_needs_oracle"):
        sh = subprocess.run([exe, "show", path], capture_output=True, text=True, timeout=600)
        if sh.returncode != 2 or "cannot prove them equal" not in sh.stderr:
            fail(f"show (no oracle) should refuse the bundle: exit {sh.returncode}, "
                 f"{sh.stderr[:400]!r}")
        loading = obj["stats"].get("symbolic", {}).get("loading", {})
        if loading.get("oracle_calls", 0) < 1:
            fail(f"stats.symbolic.loading counts no cvc5 call: {loading}")
    twin = extra.get("twin")
    if twin:
        tw = subprocess.run([exe, "check", "--quiet", "--format", "json",
                             os.path.join(root, twin)], capture_output=True, text=True,
                            timeout=600)
        tobj = json.loads(tw.stdout)
        if tobj.get("verdict") != obj.get("verdict"):
            fail(f"twin {twin}: verdict {tobj.get('verdict')}, this one {obj.get('verdict')}")
        if tobj["output_relation"] != obj["output_relation"]:
            fail(f"twin {twin}: output relation {tobj['output_relation']}, "
                 f"this one {obj['output_relation']}")
        tf, f = tobj.get("failure") or {}, obj.get("failure") or {}
        for key in ("kind", "node", "tensor"):
            if tf.get(key) != f.get(key):
                fail(f"twin {twin}: failure {key} {tf.get(key)}, this one {f.get(key)}")
        print(f"twin {twin}: same verdict, output relation and failure")
    print("PASS")


if __name__ == "__main__":
    main()
