#!/usr/bin/env python3
"""fanout.py — the fan-out benchmark of issue 18: the chain of N adds that
all read one input ("a 1,000-node chain of adds that all read one input
... ends in under 10 s"), timed from one command.

usage: tools/bench/fanout.py [--shardcheck PATH] [--nodes N] [--ranks R]
                             [--runs K] [--timeout S] [--json FILE]

The bundles are made by tools/bench/fanout-bundle.py (the chain of N adds
reading one input c, replicated on R ranks, default 1000 and 2) into a
temporary directory (deleted afterwards), in both forms: `direct` (each
add reads c) and `via-view` (each add reads c through a view of its own,
as traced graphs do), and each is checked with the command's defaults and
with `--no-memo` (every spec node proved: the exploration itself, as
tests/scale/run-fanout.py measures it).  Each of the four runs once
untimed (lemma cache), then K times (default 5) as a fresh process,
alternated across the four so that a change of load falls on all alike;
measured by tools/bench/measure.py: medians of CPU (user + system, from
wait4) and wall, the largest peak RSS, the check's own seconds
(stats.seconds), the impl nodes explored and the spec nodes carried.

Target (issue 18): under 10 s, read on the CPU median (the machine is
shared: wall grows with its load; the load average is printed).  The
expected verdict is refines with output relation y_N = [r0.y_N, ...];
any other verdict is reported as a failure.

Exit 0 when every run refines (whatever the times); 1 if a verdict is not
refines; 2 on bad usage."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import measure  # noqa: E402

FANOUT_BUNDLE = os.path.join(HERE, "fanout-bundle.py")
TARGET_S = 10.0
VARIANTS = [("direct", [], []), ("direct", [], ["--no-memo"]),
            ("via-view", ["--via-view"], []), ("via-view", ["--via-view"], ["--no-memo"])]


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shardcheck",
                    default=os.path.join(ROOT, "build-rel", "src", "cli", "shardcheck"))
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--json", metavar="FILE")
    a = ap.parse_args(argv)
    if a.nodes < 1 or a.ranks < 1 or a.runs < 1:
        ap.error("--nodes, --ranks and --runs must be at least 1")
    if not os.access(a.shardcheck, os.X_OK):
        ap.error(f"{a.shardcheck} not found (meson setup build-rel --buildtype=release && "
                 "ninja -C build-rel src/cli/shardcheck, or give --shardcheck PATH)")
    a.shardcheck = os.path.abspath(a.shardcheck)
    return a


def make_bundle(a, flags, path):
    p = subprocess.run([sys.executable, FANOUT_BUNDLE, "--nodes", str(a.nodes), "--ranks",
                        str(a.ranks), "-o", path] + flags,
                       capture_output=True, text=True, timeout=a.timeout)
    if p.returncode != 0:
        raise RuntimeError(f"fanout-bundle.py exited {p.returncode}: {p.stderr.strip()[:300]}")


def refines(m, a):
    obj = m["obj"]
    want = [f"r{r}.y_{a.nodes}" for r in range(a.ranks)]
    got = (obj.get("output_relation") or {}).get(f"y_{a.nodes}")
    return m["exit"] == 0 and obj.get("verdict") == "refines" and sorted(got or []) == sorted(want)


def main(argv=None):
    a = parse_args(argv)
    load0 = os.getloadavg()
    print(f"shardcheck {a.shardcheck}: chain of {a.nodes} adds reading one input on "
          f"{a.ranks} ranks, {a.runs} timed runs each (alternated), {os.cpu_count()} cores, "
          f"load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}\n")
    rows, bad = [], 0
    with tempfile.TemporaryDirectory(prefix="sc-bench-fanout-") as tmp:
        runs = {}
        for form, gflags, cflags in VARIANTS:
            path = os.path.join(tmp, f"{form}.json")
            if not os.path.exists(path):
                make_bundle(a, gflags, path)
            key = (form, tuple(cflags))
            measure.run_check(a.shardcheck, path, extra=cflags, timeout=a.timeout)  # warm
            runs[key] = (path, cflags, [])
        for _ in range(a.runs):
            for key, (path, cflags, ms) in runs.items():
                ms.append(measure.run_check(a.shardcheck, path, extra=cflags, timeout=a.timeout))
        for (form, cflags), (_, _, ms) in runs.items():
            st = ms[-1]["obj"].get("stats") or {}
            ok = all(refines(m, a) for m in ms)
            bad += not ok
            row = {"form": form, "flags": list(cflags), "refines": ok,
                   "verdict": ms[-1]["obj"].get("verdict"), "explored": st.get("explored"),
                   "carried": st.get("carried"), "visited": st.get("visited"),
                   "cpus": [m["cpu"] for m in ms], **measure.summarize(ms)}
            rows.append(row)
    load1 = os.getloadavg()
    print("| form | flags | verdict | visited | explored | carried | CPU s | wall s "
          "| check s | peak RSS MiB | under 10 s (CPU) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['form']} | {' '.join(r['flags']) or '-'} | "
              f"{r['verdict'] if r['refines'] else '**' + str(r['verdict']) + '**'} | "
              f"{r['visited']} | {r['explored']} | {'-' if r['carried'] is None else r['carried']} | {r['cpu']:.3f} | "
              f"{r['wall']:.3f} | {r['check']:.3f} | {r['rss_mib']:.1f} | "
              f"{'yes' if r['refines'] and r['cpu'] < TARGET_S else 'NO'} |")
    print(f"\nload average (1 min) at the start {load0[0]:.2f}, at the end {load1[0]:.2f}; "
          "CPU: median of user + system of the whole command; check: stats.seconds (wall)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"shardcheck": a.shardcheck, "nodes": a.nodes, "ranks": a.ranks,
                       "runs": a.runs, "load_start": list(load0), "load_end": list(load1),
                       "target_s": TARGET_S, "rows": rows}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
