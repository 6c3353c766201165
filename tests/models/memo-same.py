#!/usr/bin/env python3
"""memo-same.py: layer memoization changes nothing but the time.

    memo-same.py SHARDCHECK SOURCE_ROOT BUNDLE...

Each BUNDLE (relative to SOURCE_ROOT; a model folder's *.lemma files are
passed with --lemmas, as tests/models/run-model.py does) is checked twice,
`check --format json` and `check --format json --no-memo`: the exit codes
and the JSON objects must be equal but for `stats` and `carried` (the
verdict, the failure with its node and nearest terms, the output relations,
the expectations, the assumptions, the impl tensors named).  Prints how
many nodes each bundle carried.  Exit 0 pass, 1 fail."""
import glob
import json
import os
import subprocess
import sys


def run(exe, bundle, extra):
    d = os.path.dirname(bundle)
    lemmas = ["--lemmas", d] if glob.glob(os.path.join(d, "*.lemma")) else []
    r = subprocess.run([exe, "check", "--quiet", "--format", "json", *lemmas, *extra, bundle],
                       capture_output=True, text=True, timeout=600)
    try:
        out = json.loads(r.stdout)
    except ValueError:
        return r.returncode, {"stdout": r.stdout[:500], "stderr": r.stderr[:500]}, 0
    carried = (out.pop("stats", None) or {}).get("carried", 0)
    out.pop("carried", None)
    return r.returncode, out, carried


def main(argv):
    if len(argv) < 4:
        print(__doc__)
        return 2
    exe, root = argv[1], argv[2]
    bad = 0
    for rel in argv[3:]:
        bundle = os.path.join(root, rel)
        code, memo, carried = run(exe, bundle, [])
        code2, plain, _ = run(exe, bundle, ["--no-memo"])
        if (code, memo) != (code2, plain):
            bad += 1
            keys = sorted(k for k in set(memo) | set(plain) if memo.get(k) != plain.get(k))
            print(f"FAIL: {rel}: exit {code} vs {code2} (--no-memo); differ in {keys}")
        else:
            print(f"ok {rel}: exit {code}, {carried} nodes carried")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
