#!/usr/bin/env python3
"""models.py — time `shardcheck check` on model bundles.

usage: tools/bench/models.py [--shardcheck PATH] [--runs N] [BUNDLE ...]

Default bundles: every entry of tests/models/verdicts.json.  For each
bundle: the verdict, spec nodes checked, impl nodes explored, the largest
per-node e-graph, the median wall time over N runs (default 5) of the
whole command (loading the lemmas and the bundle included) and of the
check alone (stats.seconds), the time per spec node, and the peak
resident memory of the process.  Prints a Markdown table (docs/performance.md
keeps the figures).  Build in release mode for figures:
  meson setup build-rel --buildtype=release && ninja -C build-rel"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_once(exe, bundle):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([exe, "check", "--quiet", "--format", "json", bundle],
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        obj = json.loads(r.stdout)
    except ValueError:
        obj = {"verdict": "error", "stats": {}}
    # ru_maxrss of children is the max over all children so far (KiB)
    return wall, obj, max(after.ru_maxrss, before.ru_maxrss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shardcheck", default=os.path.join(ROOT, "build-rel", "src", "cli", "shardcheck"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("bundles", nargs="*")
    a = ap.parse_args()
    if not os.path.exists(a.shardcheck):
        sys.exit(f"models.py: {a.shardcheck} not found (meson setup build-rel --buildtype=release && ninja -C build-rel)")
    bundles = a.bundles
    if not bundles:
        with open(os.path.join(ROOT, "tests", "models", "verdicts.json")) as f:
            bundles = [os.path.join(ROOT, k) for k in json.load(f)]
    print("| bundle | verdict | spec nodes | impl nodes explored | max e-nodes | wall s (median) | check s | ms / spec node | peak RSS MiB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for b in bundles:
        walls, checks, rss, obj = [], [], 0, {}
        for _ in range(a.runs):
            # a fresh process per run: ru_maxrss is per process
            w, obj, _ = run_once(a.shardcheck, b)
            walls.append(w)
            checks.append(obj.get("stats", {}).get("seconds", 0.0))
        r = subprocess.run(["/usr/bin/env", "python3", "-c",
                            "import resource, subprocess, sys; subprocess.run(sys.argv[1:], capture_output=True); "
                            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
                            a.shardcheck, "check", "--quiet", "--format", "json", b],
                           capture_output=True, text=True)
        rss = int(r.stdout.strip() or 0) / 1024.0
        st = obj.get("stats", {})
        visited = max(st.get("visited", 0), 1)
        med_check = statistics.median(checks)
        print(f"| {os.path.relpath(b, ROOT)} | {obj.get('verdict')} | {st.get('visited', 0)} | "
              f"{st.get('explored', 0)} | {st.get('max_enodes', 0)} | {statistics.median(walls):.3f} | "
              f"{med_check:.3f} | {1000 * med_check / visited:.2f} | {rss:.1f} |")


if __name__ == "__main__":
    main()
