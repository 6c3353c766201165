#!/usr/bin/env python3
"""jobs-same.py: `check --jobs N` changes nothing but the time.

    jobs-same.py [-P K] [--single N] SHARDCHECK SOURCE_ROOT [BUNDLE...]

Each BUNDLE (relative to SOURCE_ROOT; default: every entry of
tests/models/verdicts.json, every bundle of models/*/ and models/bugs/*/,
and every bundle of the bundles suite, tests/bundles/accept and reject)
is checked with `check --format json --jobs 1` and with `--jobs 2` (a
model folder's *.lemma files are passed with --lemmas, as run-model.py
does).  A bundle refused at load (exit 2) must be refused alike: the
same message on stderr.  Otherwise the exit
codes and the JSON objects must be equal, stats included, but for what
measures time or the symtab's work: stats.seconds, stats.slowest_seconds,
stats.slowest_node (the slowest node is a timing) and stats.symbolic (how
often the symtab's cache answered depends on which proof asked first, and
a proof made ahead and dropped for a carry still asked).  The wall-time
budgets of cvc5's queries and of the runner's saturations are raised
(SC_SMT_TLIMIT_MS=20000, SC_TIME_LIMIT=10000) so that a loaded machine
does not cut a query or a saturation short in one of the two runs.  -P K runs K
bundles at a time.

--single N checks each bundle once, with `--jobs N` and SC_SCHEDULE_TRACE
set, for a ThreadSanitizer build (docs/architecture.md, "Parallel
schedule"; TSAN_OPTIONS and G_SLICE=always-malloc are the caller's): a
run fails on a sanitizer's report or without a result, and the summary
counts the runs whose check used the threads (the schedule's trace line;
bundles with data-dependent operators and refused ones stay sequential).
Exit 0 pass, 1 fail."""
import concurrent.futures
import glob
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

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


class Ran:
    """What a child process left: exit code, stdout, stderr (texts)."""

    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


# CPU (user + system, from wait4) and wall seconds of every check, per
# --jobs value: the summary's totals (what the default --jobs costs a run
# of the test suites)
TIMES = {}
TIMES_LOCK = threading.Lock()


def run_child(argv, env):
    """ARGV run to its end (killed after 30 minutes): (a Ran, wall s, rusage)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        p = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        timer = threading.Timer(1800, p.kill)
        timer.start()
        _, status, ru = os.wait4(p.pid, 0)
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        wall = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        return (Ran(p.returncode, out.read().decode(errors="replace"),
                    err.read().decode(errors="replace")), wall, ru)


def run(exe, path, jobs, env=ENV):
    try:
        r, wall, ru = run_child([exe, "check", "--quiet", "--format", "json", "--jobs", str(jobs),
                                 *lemma_args(path), path], env)
    except OSError as e:
        return None, {"error": str(e)}
    with TIMES_LOCK:
        cpu, w, n = TIMES.get(jobs, (0.0, 0.0, 0))
        TIMES[jobs] = (cpu + ru.ru_utime + ru.ru_stime, w + wall, n + 1)
    if r.returncode == 2 and "Sanitizer" not in r.stderr:
        # refused at load: no result, the message is what must agree
        return 2, {"refused": r.stderr}
    try:
        out = json.loads(r.stdout)
    except ValueError:
        out = None
    if not isinstance(out, dict) or r.returncode not in (0, 1, 3):
        # no result (a crash, a sanitizer's report, an input error): a
        # failure even when both runs fail alike
        return None, {"exit": r.returncode, "stdout": r.stdout[:300], "stderr": r.stderr[-500:]}
    if "ThreadSanitizer" in r.stderr or "Sanitizer" in r.stderr:
        return None, {"exit": r.returncode, "stderr": r.stderr[-2000:]}
    out["_threaded"] = "\nschedule: " in "\n" + r.stderr
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
    one.pop("_threaded", None)
    two.pop("_threaded", None)
    d = differ(one, two)
    if d:
        return False, f"FAIL: {rel}: the JSON results differ at {d}"
    verdict = one.get("verdict", "refused" if code1 == 2 else "?")
    return True, f"ok {rel}: exit {code1}, {verdict}"


def check_single(exe, root, rel, jobs):
    """One run with --jobs JOBS: (ok, threaded, line)."""
    path = os.path.join(root, rel)
    code, out = run(exe, path, jobs, dict(ENV, SC_SCHEDULE_TRACE="1"))
    if code is None:
        return False, False, f"FAIL: {rel}: no result with --jobs {jobs}: {out}"
    threaded = False
    if code != 2:
        # the trace line is the last of stderr; run() kept the JSON only
        threaded = out.get("_threaded", False)
    return True, threaded, f"ok {rel}: exit {code}{', threads' if threaded else ''}"


def default_bundles(root):
    with open(os.path.join(root, "tests", "models", "verdicts.json")) as f:
        listed = list(json.load(f))
    found = []
    for pattern in (("models", "*", "*.json"), ("models", "bugs", "*", "*.json"),
                    ("tests", "bundles", "accept", "*.json"),
                    ("tests", "bundles", "reject", "*.json")):
        found += sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, *pattern)))
    seen, out = set(), []
    for rel in listed + found:
        if rel not in seen:
            seen.add(rel)
            out.append(rel)
    return out


def print_times():
    for jobs, (cpu, wall, n) in sorted(TIMES.items()):
        print(f"--jobs {jobs}: {n} checks, {cpu:.2f} s of CPU, {wall:.1f} s of wall time "
              f"(load average now {os.getloadavg()[0]:.1f})")


def main(argv):
    par, single = 1, None
    while len(argv) > 2 and argv[1] in ("-P", "--single"):
        if argv[1] == "-P":
            par = int(argv[2])
        else:
            single = int(argv[2])
        argv = [argv[0]] + argv[3:]
    if len(argv) < 3:
        print(__doc__)
        return 2
    exe, root = argv[1], argv[2]
    bundles = argv[3:] or default_bundles(root)
    bad = threaded = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=par) as ex:
        if single is not None:
            for ok, thr, line in ex.map(lambda rel: check_single(exe, root, rel, single), bundles):
                print(line, flush=True)
                bad += 0 if ok else 1
                threaded += 1 if thr else 0
            print(f"{len(bundles) - bad} passed, {bad} failed; {threaded} used the threads")
            print_times()
            return 1 if bad else 0
        for ok, line in ex.map(lambda rel: check(exe, root, rel), bundles):
            print(line, flush=True)
            bad += 0 if ok else 1
    print(f"{len(bundles) - bad} passed, {bad} failed")
    print_times()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
