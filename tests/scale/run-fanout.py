#!/usr/bin/env python3
"""run-fanout.py: the chain of N adds that all read one input (issue 18,
"no quadratic fan-out"), made by tools/bench/fanout-bundle.py, must refine
with exploration linear in N.

    run-fanout.py SHARDCHECK SOURCE_ROOT N [--via-view]

Generates the bundle into a temporary directory, runs `SHARDCHECK check
--no-memo --quiet --format json` (exploration itself is measured, not
memoization); pass iff exit 0, verdict "refines", and at most 64 * N impl
nodes explored in all (each rank's shared input has N consumers: visiting
every one at every node would explore about 4 * N * N).  Exit 0 pass, 1
fail."""
import json
import os
import subprocess
import sys
import tempfile


def main(argv):
    if len(argv) < 4:
        print(__doc__)
        return 2
    exe, root, n = argv[1], argv[2], int(argv[3])
    extra = argv[4:]
    with tempfile.TemporaryDirectory(prefix="sc-fanout-") as tmp:
        bundle = os.path.join(tmp, "fanout.json")
        g = subprocess.run([sys.executable, os.path.join(root, "tools", "bench", "fanout-bundle.py"),
                            "--nodes", str(n), "-o", bundle, *extra],
                           capture_output=True, text=True, timeout=120)
        if g.returncode != 0:
            print(f"FAIL: fanout-bundle.py exited {g.returncode}: {g.stderr.strip()}")
            return 1
        r = subprocess.run([exe, "check", "--no-memo", "--quiet", "--format", "json", bundle],
                           capture_output=True, text=True, timeout=550)
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        print(f"FAIL: no JSON report (exit {r.returncode}); stderr: {r.stderr.strip()[:2000]}")
        return 1
    st = rep.get("stats", {})
    print(f"# N={n} {' '.join(extra)}: exit {r.returncode}, stats {json.dumps(st)}")
    if r.returncode != 0 or rep.get("verdict") != "refines":
        print(f"FAIL: expected refines, got {rep.get('verdict')} (exit {r.returncode})")
        return 1
    if st.get("explored", 0) > 64 * n:
        print(f"FAIL: {st.get('explored')} impl nodes explored for {n} adds: quadratic fan-out")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
