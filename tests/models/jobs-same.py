#!/usr/bin/env python3
"""jobs-same.py: `check --jobs N` changes nothing but the time.

    jobs-same.py [-P K] SHARDCHECK SOURCE_ROOT [BUNDLE...]

Each BUNDLE (relative to SOURCE_ROOT; default: every entry of
tests/models/verdicts.json and every bundle of models/*/) is checked with
`check --format json --jobs 1` and with `--jobs 2` (a model folder's
*.lemma files are passed with --lemmas, as run-model.py does).  The exit
codes and the JSON objects must be equal, stats included, but for what
measures time or the symtab's work: stats.seconds, stats.slowest_seconds,
stats.slowest_node (the slowest node is a timing) and stats.symbolic (how
often the symtab's cache answered depends on which proof asked first, and
a proof made ahead and dropped for a carry still asked).  The wall-time
budgets of cvc5's queries and of the runner's saturations are raised
(SC_SMT_TLIMIT_MS=20000, SC_TIME_LIMIT=10000) so that a loaded machine
does not cut a query or a saturation short in one of the two runs.  -P K runs K
bundles at a time.  Exit 0 pass, 1 fail."""
import concurrent.futures
import glob
import json
import os
import subprocess
import sys

TIMINGS = ("seconds", "slowest_seconds", "slowest_node", "symbolic")
# The two wall-time budgets of a check make its result depend on the
# machine's load, with or without threads: cvc5's per query (500 ms) and
# the runner's per saturation (5 s, egg's default).  Both are generous here
# (the deterministic limits, cvc5's resource limit and the runner's
# iteration and node limits, still bound every query and saturation).
ENV = dict(os.environ, SC_SMT_TLIMIT_MS=os.environ.get("SC_SMT_TLIMIT_MS", "20000"),
           SC_TIME_LIMIT=os.environ.get("SC_TIME_LIMIT", "10000"))


def lemma_args(path):
    folder = os.path.dirname(os.path.abspath(path))
    return ["--lemmas", folder] if any(n.endswith(".lemma") for n in os.listdir(folder)) else []


def run(exe, path, jobs):
    try:
        r = subprocess.run([exe, "check", "--quiet", "--format", "json", "--jobs", str(jobs),
                            *lemma_args(path), path], capture_output=True, text=True,
                           timeout=1800, env=ENV)
    except (OSError, subprocess.SubprocessError) as e:
        return None, {"error": str(e)}
    try:
        out = json.loads(r.stdout)
    except ValueError:
        out = None
    if not isinstance(out, dict) or r.returncode not in (0, 1, 3):
        # no result (a crash, a sanitizer's report, an input error): a
        # failure even when both runs fail alike
        return None, {"exit": r.returncode, "stdout": r.stdout[:300], "stderr": r.stderr[-500:]}
    stats = out.get("stats")
    if isinstance(stats, dict):
        for k in TIMINGS:
            stats.pop(k, None)
    return r.returncode, out


def differ(a, b, where=""):
    """The first path at which A and B differ, or None."""
    if type(a) is not type(b):
        return where or "/"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{where}/{k}"
            d = differ(a[k], b[k], f"{where}/{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where} (length {len(a)} vs {len(b)})"
        for i, (x, y) in enumerate(zip(a, b)):
            d = differ(x, y, f"{where}/{i}")
            if d:
                return d
        return None
    return None if a == b else (where or "/")


def check(exe, root, rel):
    path = os.path.join(root, rel)
    code1, one = run(exe, path, 1)
    code2, two = run(exe, path, 2)
    for jobs, code, out in ((1, code1, one), (2, code2, two)):
        if code is None:
            return False, f"FAIL: {rel}: no result with --jobs {jobs}: {out}"
    if code1 != code2:
        return False, f"FAIL: {rel}: exit {code1} with --jobs 1, {code2} with --jobs 2"
    d = differ(one, two)
    if d:
        return False, f"FAIL: {rel}: the JSON results differ at {d}"
    verdict = one.get("verdict", "?")
    return True, f"ok {rel}: exit {code1}, {verdict}"


def default_bundles(root):
    with open(os.path.join(root, "tests", "models", "verdicts.json")) as f:
        listed = list(json.load(f))
    found = sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "models", "*", "*.json")))
    seen, out = set(), []
    for rel in listed + found:
        if rel not in seen:
            seen.add(rel)
            out.append(rel)
    return out


def main(argv):
    par = 1
    if len(argv) > 2 and argv[1] == "-P":
        par = int(argv[2])
        argv = [argv[0]] + argv[3:]
    if len(argv) < 3:
        print(__doc__)
        return 2
    exe, root = argv[1], argv[2]
    bundles = argv[3:] or default_bundles(root)
    bad = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=par) as ex:
        for ok, line in ex.map(lambda rel: check(exe, root, rel), bundles):
            print(line, flush=True)
            bad += 0 if ok else 1
    print(f"{len(bundles) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
