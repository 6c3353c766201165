#!/usr/bin/python3
"""run-usercheck.py — user lemmas are checked before use (issue 19).

usage: run-usercheck.py SHARDCHECK SRCDIR CASE

Cases:
  false    `check --lemmas false/` with a false lemma (mm commutes): exit 2
           before any verdict, naming the lemma, its file:line and the
           instance, in text and JSON; `lemmas check` fails it too (exit 1)
  opaque   an operator declared without a definition, called by both graphs
           (opaque-kernel.json): the check refines, and the report lists the
           operator as an assumption with its unchecked lemma and the
           relation relying on it (text and JSON); `lemmas check` says it is
           unchecked
  cache    a second check of the same user lemmas takes its passes from the
           cache (SC_LEMMA_CACHE: a fresh directory); a cache directory
           others can write is not used
"""
import json
import os
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(exe, args, env=None):
    r = subprocess.run([exe] + args, capture_output=True, text=True, timeout=300, env=env)
    print("$", " ".join(args), "->", r.returncode)
    print(r.stdout[-3000:], r.stderr[-3000:])
    return r


def main():
    exe, src, case = sys.argv[1], sys.argv[2], sys.argv[3]
    here = os.path.join(src, "tests", "usercheck")
    mlp = os.path.join(src, "models", "mlp-tp2")
    if case == "false":
        d = os.path.join(here, "false")
        r = run(exe, ["check", "--lemmas", d, mlp])
        if r.returncode != 2:
            fail(f"exit {r.returncode}, expected 2 (a false user lemma)")
        for p in ["false.lemma:2:", "mm_commutes is false", "instance: ?a:"]:
            if p not in r.stderr:
                fail(f"stderr lacks '{p}'")
        if "refines" in r.stdout:
            fail("a verdict was printed")
        r = run(exe, ["check", "--format", "json", "--lemmas", d, mlp])
        o = json.loads(r.stdout)
        if r.returncode != 2 or o.get("verdict") != "error" or \
                "mm_commutes" not in o["error"]["message"]:
            fail("json: no error naming the lemma")
        r = run(exe, ["lemmas", "check", "--lemmas", d])
        if r.returncode != 1 or "FAIL  mm_commutes" not in r.stdout:
            fail("lemmas check does not fail the lemma")
    elif case == "opaque":
        d = os.path.join(here, "opaque")
        b = os.path.join(here, "opaque-kernel.json")
        r = run(exe, ["check", "--lemmas", d, b])
        if r.returncode != 0:
            fail(f"exit {r.returncode}")
        line = [l for l in r.stdout.splitlines() if l.startswith("assumed: operator mylib.opq")]
        if not line or "k.lemma:2" not in line[0] or "opq_cat_rows" not in line[0] or \
                "y = cat(y_0, y_1, dim=0)" not in line[0]:
            fail("the text report does not list the opaque operator with its lemma and relation")
        if "unchecked, an assumption" not in r.stderr:
            fail("no warning for the unchecked user lemma")
        r = run(exe, ["check", "--format", "json", "--lemmas", d, b])
        o = json.loads(r.stdout)
        ops = o.get("assumed_operators") or []
        if len(ops) != 1 or ops[0]["op"] != "mylib.opq.default" or \
                ops[0]["relations"] != ["y = cat(y_0, y_1, dim=0)"] or not ops[0]["unchecked_lemmas"]:
            fail(f"json assumed_operators: {ops}")
        r = run(exe, ["check", "--lemmas", d, mlp])
        if "assumed: operator mylib.opq.default" not in r.stdout or "relying on it: none" not in r.stdout:
            fail("an unused user opaque operator is not listed")
        r = run(exe, ["lemmas", "check", "--lemmas", d])
        if "operator mylib.opq.default" not in r.stdout or "unchecked" not in r.stdout:
            fail("lemmas check does not say the opaque operator is unchecked")
        r = run(exe, ["lemmas", "check", "--format", "json", "--lemmas", d])
        o = json.loads(r.stdout)
        if not any(x["op"] == "mylib.opq.default" for x in o.get("opaque_operators", [])):
            fail("lemmas check json: no opaque_operators entry")
        r = run(exe, ["check", "--validate", "--lemmas", d, b])
        if "no definition" not in r.stdout + r.stderr:
            fail("--validate does not say the opaque operator was not run")
    elif case == "cache":
        with tempfile.TemporaryDirectory() as tmp:
            cache = os.path.join(tmp, "c")
            os.mkdir(cache, 0o700)
            env = dict(os.environ, SC_LEMMA_CACHE=cache)
            d = os.path.join(src, "models", "custom-kernel")
            b = os.path.join(d, "custom-kernel-tp2-fwd.json")
            r = run(exe, ["check", "--lemmas", d, b], env)
            if r.returncode != 0:
                fail(f"exit {r.returncode}")
            n1 = len(os.listdir(cache))
            if n1 == 0:
                fail("nothing cached")
            r = run(exe, ["check", "--lemmas", d, b], env)
            if r.returncode != 0 or len(os.listdir(cache)) != n1:
                fail("the second run did not reuse the cache")
            # a false lemma is never cached, whatever the cache holds
            r = run(exe, ["check", "--lemmas", os.path.join(here, "false"), b], env)
            if r.returncode != 2:
                fail("a false lemma passed with a cache")
            os.chmod(cache, 0o777)
            for f in os.listdir(cache):
                os.remove(os.path.join(cache, f))
            r = run(exe, ["check", "--lemmas", d, b], env)
            if r.returncode != 0 or os.listdir(cache):
                fail("a group/other-writable cache directory was written")
    else:
        fail("unknown case " + case)
    print("PASS")


if __name__ == "__main__":
    main()
