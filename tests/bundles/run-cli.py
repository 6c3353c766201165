#!/usr/bin/env python3
"""run-cli.py — the shardcheck command line outside `check BUNDLE`:
--version, --help, unknown commands and options, `ops` in both formats,
--jobs (its range, and the same result for the default and any N).

usage: run-cli.py SHARDCHECK SRCROOT"""
import json
import subprocess
import sys

exe, root = sys.argv[1], sys.argv[2]
failures = []


def run(*args):
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=60)


def expect(cond, what):
    if not cond:
        failures.append(what)


r = run("--version")
expect(r.returncode == 0, "--version exits 0")
expect(r.stdout.startswith("shardcheck 0.1.0 (cvc5 "), "--version prints 'shardcheck 0.1.0 (cvc5 ...)'")

r = run("--help")
expect(r.returncode == 0 and "shardcheck check" in r.stdout and "Examples:" in r.stdout,
       "--help prints usage and examples")

r = run("frobnicate")
expect(r.returncode == 2, "unknown command exits 2")
expect("shardcheck: unknown command 'frobnicate'" in r.stderr and "Usage:" in r.stderr,
       "unknown command prints its name and the usage")

r = run()
expect(r.returncode == 2 and "Usage:" in r.stderr, "no command exits 2 with usage")

r = run("check")
expect(r.returncode == 2 and "exactly one BUNDLE" in r.stderr, "check without a bundle exits 2")

r = run("check", "--format", "xml", root + "/models/mlp-tp2/bundle.json")
expect(r.returncode == 2 and "--format: expected text or json, found 'xml'" in r.stderr,
       "a bad --format exits 2")

r = run("check", "--lemmas", "/nonexistent-dir", root + "/models/mlp-tp2/bundle.json")
expect(r.returncode == 2 and "--lemmas" in r.stderr, "a missing --lemmas directory exits 2")

r = run("check", "/nonexistent/bundle.json")
expect(r.returncode == 2 and r.stderr.startswith("shardcheck: /nonexistent/bundle.json: cannot read"),
       "an unreadable bundle exits 2 naming it")

for bad in ("-1", "257"):
    r = run("check", "--jobs", bad, root + "/models/mlp-tp2/bundle.json")
    expect(r.returncode == 2 and "--jobs takes a number from 0 (one per core) to 256" in r.stderr,
           f"--jobs {bad} exits 2")


def check_json(*args):
    r = run("check", "--quiet", "--format", "json", *args,
            root + "/models/mlp-megatron/mlp-megatron-tp2-fwdbwd.json")
    try:
        out = json.loads(r.stdout)
    except ValueError:
        return r.returncode, None
    for k in ("seconds", "slowest_seconds", "slowest_node", "symbolic"):  # jobs-same.py's
        out.get("stats", {}).pop(k, None)
    return r.returncode, out


# the default (one thread) and --jobs 0, 1 and 3 give the same result
results = [check_json(*a) for a in ((), ("--jobs", "0"), ("--jobs", "1"), ("-j", "3"))]
expect(results[0][0] == 0 and results[0][1] is not None, "check with the default --jobs refines")
expect(all(r == results[0] for r in results), "the default --jobs, 0, 1 and 3 give the same result")

r = run("show")
expect(r.returncode == 2 and "exactly one BUNDLE" in r.stderr, "show without a bundle exits 2")

r = run("show", root + "/models/mlp-tp2/bundle.json")
expect(r.returncode == 0, "a valid bundle exits 0")
for line in ["bundle: mlp-tp2", "spec: 3 inputs, 3 nodes, 6 tensors",
             "top ops: aten.mm.default x2, aten.gelu.default x1",
             "impl: 6 inputs, 7 nodes, 14 tensors", "    x [4, 8] f32",
             "  w1 = cat(w1_0, w1_1, dim=1) : [8, 16] f32",
             "  x = x_0 : [4, 8] f32 | x_1 : [4, 8] f32", "  y = y_0 : [4, 8] f32 | y_1 : [4, 8] f32",
             "verdict: not checked (shardcheck show only validates; use check)"]:
    expect(line in r.stdout, f"show summary contains {line!r}")

r = run("ops")
expect(r.returncode == 0, "ops exits 0")
lines = r.stdout.splitlines()
expect(any(l.startswith("sc.cat.default") and "clean" in l and "cat(Tensor[] tensors" in l
           for l in lines), "ops lists sc.cat with flags and schema")
expect(any(l.startswith("aten.mm.default") for l in lines), "ops lists aten.mm.default")

r = run("ops", "--format", "json")
try:
    ops = json.loads(r.stdout)
    names = {o["name"]: o for o in ops}
    expect("comm.all_reduce.default" in names, "ops json has comm.all_reduce")
    expect("collective" in names["comm.all_reduce.default"]["flags"], "comm.all_reduce is collective")
    expect(len(ops) == len(lines), "text and json list the same operators")
except (ValueError, KeyError) as e:
    failures.append(f"ops --format json: {e}")

for f in failures:
    print("FAIL:", f)
print("PASS" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)
