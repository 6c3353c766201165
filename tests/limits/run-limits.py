#!/usr/bin/python3
"""run-limits.py — the budgets and input limits of `shardcheck check` (issue 19).

usage: run-limits.py SHARDCHECK SRCDIR CASE

Cases:
  time      a generated 1,000-node bundle (gen-chain.py) under --time-limit 0.02
            and --no-memo (layer memoization carries its repeated nodes in
            milliseconds): exit 3 at once, verdict limit in text and JSON, naming the limit
            and the spec node being visited
  enodes    --max-enodes 10: exit 3 naming the e-node limit
  memory    --memory-limit 1 (MiB): exit 3 naming the memory limit
  defaults  the same bundle within the default budget: refines, exit 0
  slow      a census program that saturates for a minute (slow-31909.json,
            shardsmith seed 31909's correct bundle) under --time-limit 2: the
            budget, not the backstop, stops it (exit 3, verdict limit naming
            the time limit and the node; the backstop's line is absent)
  backstop  the same bundle under a caller's RLIMIT_CPU of 1 s (tighter than
            the backstop's): the SIGXCPU handler ends it with exit 3, the
            line "shardcheck: limit: time limit (RLIMIT_CPU 1 s, ..." and,
            with --format json, a well-formed result with verdict limit
  refuted   a limit the values refute is a failure (src/infer/refuted.c):
            with a saturation node limit of 1,000 (SC_NODE_LIMIT),
            shardsmith 31837's mutant (tests/models/stall/) stops at the node
            limit at 'split', its first diverging node, and an expected output
            relation differs on the values: exit 1, verdict fails at split,
            the JSON failure's limit and refuted set, the text report saying
            so; 31813's correct program (limit-31813.json) stops at the node
            limit at 'add_2' and its expectations hold on the
            values: exit 3, verdict limit, nothing refuted (at the default
            limit both finish: fails at split, refines)
  inputs    /dev/zero, a directory named bundle.json, a FIFO, a file over
            --max-input-bytes, a lemma file that is a FIFO: exit 2 within a
            second, with a message naming the file and what it is
"""
import json
import os
import subprocess
import sys
import tempfile
import time


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(exe, args, timeout=120, env=None):
    t0 = time.monotonic()
    r = subprocess.run([exe] + args, capture_output=True, text=True, timeout=timeout,
                       env=None if env is None else dict(os.environ, **env))
    return r, time.monotonic() - t0


def chain(tmp, src, n=1000):
    out = os.path.join(tmp, "chain.json")
    subprocess.run([sys.executable, os.path.join(src, "tests", "limits", "gen-chain.py"), str(n),
                    out], check=True)
    return out


def expect_limit(exe, bundle, opts, phrase, env=None):
    r, _ = run(exe, ["check", "-q"] + opts + [bundle], env=env)
    print(r.stdout[:2000], r.stderr[:2000])
    if r.returncode != 3:
        fail(f"{opts}: exit {r.returncode}, expected 3")
    if "limit" not in r.stdout.splitlines()[0] or phrase not in r.stdout or "spec node '" not in r.stdout:
        fail(f"{opts}: text report lacks the verdict, '{phrase}' or the node")
    r, _ = run(exe, ["check", "-q", "--format", "json"] + opts + [bundle], env=env)
    if r.returncode != 3:
        fail(f"{opts} json: exit {r.returncode}")
    o = json.loads(r.stdout)
    f = o.get("failure") or {}
    if o.get("verdict") != "limit" or phrase not in f.get("limit", "") or not f.get("node"):
        fail(f"{opts} json: verdict/limit/node missing: {o.get('verdict')} {f}")


def expect_refuted(exe, bundle, node, env=None):
    r, _ = run(exe, ["check", "-q", "--format", "json", bundle], env=env)
    print(r.stdout[:2000], r.stderr[:2000])
    o = json.loads(r.stdout)
    f = o.get("failure") or {}
    if r.returncode != 1 or o.get("verdict") != "fails" or f.get("node") != node:
        fail(f"exit {r.returncode}, verdict {o.get('verdict')} at {f.get('node')}: "
             f"expected fails at {node}")
    if "node limit" not in f.get("limit", "") or " differs on 2 runs " not in f.get("refuted", ""):
        fail(f"the failure lacks its limit or its refutation: {f.get('limit')} {f.get('refuted')}")
    r, _ = run(exe, ["check", "-q", bundle], env=env)
    if r.returncode != 1 or not r.stdout.splitlines()[0].endswith(": fails") or \
            "the values refute an expected output relation" not in r.stdout:
        fail("the text report does not say the values refute the program: " + r.stdout[:600])


def rlimit_cpu_1s():
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (1, hard))


def expect_backstop(exe, bundle):
    """The backstop (budget.h) in text and JSON: a caller's RLIMIT_CPU of 1 s
    reached while the --time-limit budget is far from spent."""
    for fmt in ("text", "json"):
        r = subprocess.run([exe, "check", "-q", "--format", fmt, bundle], capture_output=True,
                           text=True, timeout=600, preexec_fn=rlimit_cpu_1s)
        print(fmt, r.returncode, r.stdout[:1000], r.stderr[:1000])
        if r.returncode != 3:
            fail(f"backstop {fmt}: exit {r.returncode}, expected 3")
        if "shardcheck: limit: time limit (RLIMIT_CPU 1 s, set by the caller)" not in r.stderr:
            fail(f"backstop {fmt}: stderr does not name the limit")
        if fmt == "json":
            o = json.loads(r.stdout)  # a well-formed result on every exit 3
            f = o.get("failure") or {}
            if o.get("verdict") != "limit" or "RLIMIT_CPU 1 s" not in f.get("limit", "") or \
                    f.get("kind") != "limit" or "node" not in f or o.get("output_relation") != {}:
                fail(f"backstop json: {o}")


def expect_refused(exe, args, phrase):
    r, dt = run(exe, args, timeout=20)
    print(args, r.returncode, r.stderr.strip()[:300], f"{dt:.2f}s")
    if r.returncode != 2:
        fail(f"{args}: exit {r.returncode}, expected 2")
    if phrase not in r.stderr:
        fail(f"{args}: stderr lacks '{phrase}'")
    if dt > 5:
        fail(f"{args}: took {dt:.1f} s, not refused at once")


def main():
    exe, src, case = sys.argv[1], sys.argv[2], sys.argv[3]
    with tempfile.TemporaryDirectory() as tmp:
        if case == "time":
            expect_limit(exe, chain(tmp, src), ["--no-memo", "--time-limit", "0.02"], "time limit (--time-limit")
        elif case == "enodes":
            expect_limit(exe, chain(tmp, src, 40), ["--max-enodes", "10"], "e-node limit")
        elif case == "memory":
            expect_limit(exe, chain(tmp, src, 40), ["--memory-limit", "1"], "memory limit")
        elif case == "defaults":
            r, _ = run(exe, ["check", "-q", chain(tmp, src)], timeout=300)
            if r.returncode != 0:
                fail(f"default budget: exit {r.returncode}\n{r.stdout[:500]}")
        elif case == "slow":
            slow = os.path.join(src, "tests", "limits", "slow-31909.json")
            expect_limit(exe, slow, ["--time-limit", "2"], "time limit (--time-limit 2 s of CPU)")
            r, _ = run(exe, ["check", "-q", "--format", "json", "--time-limit", "2", slow], 600)
            if "passed by" in r.stderr or "does not check" in r.stderr:
                fail("slow: the backstop stopped it, not the budget: " + r.stderr[:300])
        elif case == "backstop":
            expect_backstop(exe, os.path.join(src, "tests", "limits", "slow-31909.json"))
        elif case == "refuted":
            # a saturation node limit of 1,000 live e-nodes (runner.h,
            # SC_NODE_LIMIT; 10,000 by default, where both now finish)
            small = {"SC_NODE_LIMIT": "1000"}
            expect_refuted(exe, os.path.join(src, "tests", "models", "stall",
                                             "shardsmith-31837-bug.json"), "split", small)
            correct = os.path.join(src, "tests", "limits", "limit-31813.json")
            expect_limit(exe, correct, [], "node limit", small)
            r, _ = run(exe, ["check", "-q", "--format", "json", correct], env=small)
            if "refuted" in (json.loads(r.stdout).get("failure") or {}):
                fail("a correct program's limit was refuted")
        elif case == "inputs":
            expect_refused(exe, ["check", "/dev/zero"], "/dev/zero: is not a regular file")
            d = os.path.join(tmp, "d")
            os.makedirs(os.path.join(d, "bundle.json"))
            expect_refused(exe, ["check", d], "is a directory")
            fifo = os.path.join(tmp, "fifo.json")
            os.mkfifo(fifo)
            expect_refused(exe, ["check", fifo], "a FIFO")
            expect_refused(exe, ["show", fifo], "a FIFO")
            big = chain(tmp, src, 40)
            expect_refused(exe, ["check", "--max-input-bytes", "1000", big],
                           "over the input limit of 1000 bytes")
            lem = os.path.join(tmp, "lemmas")
            os.makedirs(lem)
            os.mkfifo(os.path.join(lem, "x.lemma"))
            expect_refused(exe, ["check", "--lemmas", lem, big], "x.lemma: error: is not a regular file")
            expect_refused(exe, ["lemmas", "check", "--lemmas", lem], "is not a regular file")
        else:
            fail("unknown case " + case)
    print("PASS")


if __name__ == "__main__":
    main()
