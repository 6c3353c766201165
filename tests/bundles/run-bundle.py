#!/usr/bin/env python3
"""run-bundle.py — run `shardcheck show` (load and validate) on one bundle and judge the result.

usage: run-bundle.py SHARDCHECK BUNDLE [--json]

If BUNDLE.expect (BUNDLE with .json replaced by .expect) exists, its first
line is the expected exit code and every further non-empty line a phrase
that stderr must contain.  Without a sidecar the bundle must be accepted
(exit 0) with "verdict:" in the output.  --json also runs with
`--format json` and checks that stdout parses and carries the expected
verdict ("error" with file and path for rejected bundles).
A bundle under tests/bundles/ (the loader's corpus) is shown with
--no-lemmas: the corpus uses registry operators only.  Any other bundle
(models/) is shown with the built-in lemma files, plus --lemmas FOLDER when
its folder holds *.lemma files (the operators a model's custom kernels
declare).
Exit status: 0 pass, 1 fail (TAP-free: meson's exitcode protocol)."""
import json
import os
import subprocess
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    if len(sys.argv) < 3:
        fail("usage: run-bundle.py SHARDCHECK BUNDLE [--json]")
    exe, bundle = sys.argv[1], sys.argv[2]
    want_json = "--json" in sys.argv[3:]
    expect = os.path.splitext(bundle)[0] + ".expect"
    code, phrases = 0, []
    if os.path.exists(expect):
        with open(expect, encoding="utf-8") as f:
            lines = [l.rstrip("\n") for l in f]
        code = int(lines[0])
        phrases = [l for l in lines[1:] if l.strip()]
    env = dict(os.environ)
    folder = os.path.dirname(os.path.abspath(bundle))
    if os.sep + os.path.join("tests", "bundles") in folder:
        lemma_args = ["--no-lemmas"]
    elif any(n.endswith(".lemma") for n in os.listdir(folder)):
        lemma_args = ["--lemmas", folder]
    else:
        lemma_args = []
    r = subprocess.run([exe, "show"] + lemma_args + [bundle], capture_output=True, text=True,
                       env=env, timeout=120)
    print("exit:", r.returncode)
    print("stdout:", r.stdout)
    print("stderr:", r.stderr)
    if r.returncode != code:
        fail(f"exit code {r.returncode}, expected {code}")
    if code == 0:
        if "verdict:" not in r.stdout:
            fail("no verdict line in the summary")
    else:
        if not r.stderr.startswith("shardcheck: "):
            fail("stderr does not start with 'shardcheck: '")
        for p in phrases:
            if p not in r.stderr:
                fail(f"stderr lacks the phrase: {p}")
    if want_json:
        r = subprocess.run([exe, "show", "--format", "json"] + lemma_args + [bundle],
                           capture_output=True,
                           text=True, env=env, timeout=120)
        if r.returncode != code:
            fail(f"--format json: exit code {r.returncode}, expected {code}")
        try:
            obj = json.loads(r.stdout)
        except ValueError as e:
            fail(f"--format json output does not parse: {e}\n{r.stdout}")
        if code == 0:
            if obj.get("verdict") in (None, "error"):
                fail(f"--format json: unexpected verdict {obj.get('verdict')}")
            if not isinstance(obj.get("spec"), dict) or "nodes" not in obj["spec"]:
                fail("--format json: summary lacks spec.nodes")
        else:
            err = obj.get("error") or {}
            want = "limit" if code == 3 else "error"
            if obj.get("verdict") != want or "message" not in err or "path" not in err \
                    or "file" not in err:
                fail(f"--format json: bad error object {obj}")
            for p in phrases:
                if p not in err["message"]:
                    fail(f"--format json: message lacks the phrase: {p}")
    print("PASS")


if __name__ == "__main__":
    main()
