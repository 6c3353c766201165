#!/usr/bin/env python3
"""startup-diff.py — the lemma selection of `check` changes no result.

usage: tools/bench/startup-diff.py [--shardcheck PATH] [--explain] [-j N] BUNDLE|DIR ...

Without --lemmas, `shardcheck check` loads the built-in library deferred and
keeps only the lemmas that can fire for the bundle (docs/performance.md,
"Start-up"); with SC_LEMMA_CACHE=0 it loads every lemma.  For every bundle
given (a DIR: every *.json under it), this runs both and compares the exit
code, stderr and the JSON result minus its timings (stats.seconds, every
key ending in "seconds", and cvc5's limit_hits: queries stopped by its
wall-time limit, which a loaded machine changes).  A model folder with its own *.lemma files
is checked with --lemmas on it, as tools/bench/models.py does (the full
load both times: the comparison then only pins that).  The first run of
each pair warms the lemma cache.  Exit 1 when a result differs; prints
each difference.  Standard library only."""
import argparse
import concurrent.futures
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def strip(x):
    if isinstance(x, dict):
        # cvc5's limit_hits counts queries stopped by its wall-time limit:
        # timing too (a query it stops still answers unknown, counted)
        return {k: strip(v) for k, v in x.items()
                if not k.endswith("seconds") and k != "limit_hits"}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x


def run(cmd, env):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=1800)
    try:
        obj = strip(json.loads(p.stdout))
    except ValueError:
        obj = p.stdout.decode(errors="replace")
    return p.returncode, p.stderr.decode(errors="replace"), obj


def compare(a, bundle):
    try:
        return compare1(a, bundle)
    except (OSError, subprocess.SubprocessError) as e:
        return f"could not run: {e}"


def compare1(a, bundle):
    cmd = [a.shardcheck, "check", "--quiet", "--format", "json"]
    if a.explain:
        cmd.append("--explain")
    d = os.path.dirname(bundle)
    if glob.glob(os.path.join(d, "*.lemma")):
        cmd += ["--lemmas", d]
    cmd.append(bundle)
    env = dict(os.environ)
    env.pop("SC_LEMMA_CACHE", None)
    run(cmd, env)  # warms the cache
    sel = run(cmd, env)
    full = run(cmd, dict(env, SC_LEMMA_CACHE="0"))
    if sel == full:
        return None
    what = []
    if sel[0] != full[0]:
        what.append(f"exit {sel[0]} (selected) vs {full[0]} (all)")
    if sel[1] != full[1]:
        what.append(f"stderr differs: {sel[1][:300]!r} vs {full[1][:300]!r}")
    if sel[2] != full[2]:
        ja, jb = json.dumps(sel[2], sort_keys=True), json.dumps(full[2], sort_keys=True)
        i = next((k for k in range(min(len(ja), len(jb))) if ja[k] != jb[k]), min(len(ja), len(jb)))
        what.append(f"JSON differs at char {i}: ...{ja[max(0, i - 80):i + 120]!r} vs "
                    f"...{jb[max(0, i - 80):i + 120]!r}")
    return "; ".join(what)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shardcheck", default=os.path.join(ROOT, "build", "src", "cli", "shardcheck"))
    ap.add_argument("--explain", action="store_true", help="run with --explain")
    ap.add_argument("-j", type=int, default=1, help="bundles compared at once")
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args()
    bundles = []
    for p in a.paths:
        if os.path.isdir(p):
            bundles += sorted(glob.glob(os.path.join(p, "**", "*.json"), recursive=True))
        else:
            bundles.append(p)
    bad = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as ex:
        for b, why in zip(bundles, ex.map(lambda b: compare(a, b), bundles)):
            if why:
                bad += 1
                print(f"DIFF {b}: {why}", flush=True)
    print(f"{len(bundles)} bundles, {bad} differ{'' if bad == 1 else ''}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
