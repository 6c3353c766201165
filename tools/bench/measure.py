"""measure.py — the measuring code shared by the benchmarks of tools/bench
(models.py: the model bundles; real.py: the real captures).

One `shardcheck check --quiet --format json` runs as a fresh child process;
its wall time is taken around the whole command (start-up, lemma loading,
bundle loading, check), its CPU time (user + system) and peak resident
memory (ru_maxrss, KiB on Linux) come from the child's own rusage, reaped
with os.wait4, so that nothing else of this process is counted.  The
JSON report is parsed; a run that prints no JSON gets verdict "error" and
the first 300 characters of its stderr.

Invariants: every child is reaped before a function returns (no zombies,
no leaked pipes); nothing is written anywhere but the child's pipes and an
anonymous temporary file for its stderr.  Python standard library only."""
import json
import os
import signal
import statistics
import subprocess
import tempfile
import threading
import time


def run_child(argv, env=None, timeout=None):
    """Run argv as a child with its own rusage: (wall s, CPU s, peak RSS KiB,
    exit code, stdout bytes, stderr bytes).  stdout is read to its end before
    the child is reaped (os.wait4), stderr goes to a temporary file (no
    deadlock on a full pipe).  With a timeout (seconds) a child still
    running then is killed and reaped, and the exit code is None."""
    with tempfile.TemporaryFile() as errf:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errf, env=env)
        lock = threading.Lock()
        state = {"reaped": False, "killed": False}

        def kill():
            with lock:  # never signal a reaped pid (it could be reused)
                if not state["reaped"]:
                    state["killed"] = True
                    os.kill(p.pid, signal.SIGKILL)

        timer = threading.Timer(timeout, kill) if timeout is not None else None
        if timer is not None:
            timer.start()
        try:
            out = p.stdout.read()  # the whole output, then reap the child ourselves
            # wait for the exit without reaping: a zombie's pid stays ours
            os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
            with lock:
                state["reaped"] = True
            _, status, ru = os.wait4(p.pid, 0)
        except BaseException:  # interrupted (^C): take the child down with us
            with lock:
                if not state["reaped"]:
                    state["reaped"] = True
                    p.kill()
                    p.wait()
            raise
        finally:
            if timer is not None:
                timer.cancel()
        wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        p.returncode = code
        p.stdout.close()
        errf.seek(0)
        err = errf.read()
    if state["killed"] and code == -signal.SIGKILL:
        code = None  # our timeout, not the child's own exit
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, code, out, err


def run_check(exe, bundle, env=None, extra=(), timeout=None):
    """One `exe check --quiet --format json EXTRA... BUNDLE`: wall and CPU
    seconds, peak RSS (KiB), the JSON result, the exit code (None if the
    timeout, in seconds, killed it), the first 2000 characters of stderr."""
    wall, cpu, rss, code, out, err = run_child(
        [exe, "check", "--quiet", "--format", "json"] + list(extra) + [bundle], env, timeout)
    try:
        obj = json.loads(out.decode())
    except ValueError:
        obj = None
    if not isinstance(obj, dict):
        obj = {"verdict": "error", "stats": {}, "error": err.decode(errors="replace")[:300]}
    return {"wall": wall, "cpu": cpu, "rss_kib": rss, "obj": obj, "exit": code,
            "stderr": err.decode(errors="replace")[:2000]}


def summarize(ms):
    """Medians of wall, CPU and check seconds (stats.seconds of the report)
    over the runs ms (results of run_check), and the largest peak RSS in MiB."""
    return {
        "wall": statistics.median(m["wall"] for m in ms),
        "cpu": statistics.median(m["cpu"] for m in ms),
        "check": statistics.median(m["obj"].get("stats", {}).get("seconds", 0.0) for m in ms),
        "rss_mib": max(m["rss_kib"] for m in ms) / 1024.0,
    }


def startup(run, runs):
    """Median wall and CPU of run(env) (a small check) with the lemma load
    cache and without it (SC_LEMMA_CACHE=0): {"cached": (wall, cpu),
    "uncached": (wall, cpu)}."""
    res = {}
    for label, env in (("cached", None), ("uncached", dict(os.environ, SC_LEMMA_CACHE="0"))):
        ms = [run(env) for _ in range(runs)]
        res[label] = (statistics.median(m["wall"] for m in ms),
                      statistics.median(m["cpu"] for m in ms))
    return res
