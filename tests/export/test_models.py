"""test_models.py -- regenerate every bundle committed under models/ from its
PyTorch source (models/*/model.py and models/bugs/*/model.py) and compare it with the committed one.

Skipped (exit 77) when torch is not importable, or when the committed
bundles were captured with another torch version (ATen graphs differ
between versions; regenerate them with tools/shardcheck-export).
Argument: optionally one model folder name to test only that model.
"""

import glob
import json
import os
import re
import sys
import tempfile

ROOT = os.environ.get("SC_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "export"))

try:
    import torch
except ImportError:
    print(f"SKIP: torch is not importable by {sys.executable}; cannot regenerate "
          f"the bundles of models/ (Debian: apt-get install python3-torch)")
    sys.exit(77)

from shardcheck_export.cli import main as cli_main  # noqa: E402


def first_diff(a, b, path="$"):
    if type(a) != type(b):
        return f"{path}: {a!r:.120} != {b!r:.120}"
    if isinstance(a, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{path}.{k}: present on one side only"
            d = first_diff(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_diff(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {a!r:.120} != {b!r:.120}"


def main(argv):
    models = sorted(glob.glob(os.path.join(ROOT, "models", "*", "model.py")) +
                    glob.glob(os.path.join(ROOT, "models", "bugs", "*", "model.py")))
    if argv:
        models = [m for m in models if os.path.basename(os.path.dirname(m)) in argv]
    if not models:
        print("no models/*/model.py found")
        return 1
    committed = {}
    for m in models:
        for j in glob.glob(os.path.join(os.path.dirname(m), "*.json")):
            committed[j] = json.load(open(j))
    versions = {re.search(r"with torch (\S+?)\.?$", b.get("description", "")).group(1)
                for b in committed.values()
                if re.search(r"with torch (\S+?)\.?$", b.get("description", ""))}
    if versions and versions != {torch.__version__}:
        print(f"SKIP: committed bundles were captured with torch {sorted(versions)}, "
              f"this is torch {torch.__version__}")
        return 77
    failed = 0
    for m in models:
        folder = os.path.dirname(m)
        name = os.path.basename(folder)
        with tempfile.TemporaryDirectory() as tmp:
            rc = cli_main([m, "-q", "--out-dir", tmp])
            made = {os.path.basename(p) for p in glob.glob(os.path.join(tmp, "*.json"))}
            have = {os.path.basename(p) for p in glob.glob(os.path.join(folder, "*.json"))}
            problems = []
            if rc != 0:
                problems.append(f"shardcheck-export exited {rc}")
            for f in sorted(have - made):
                problems.append(f"{f} is committed but the model no longer exports it")
            for f in sorted(made - have):
                problems.append(f"{f} is exported but not committed")
            for f in sorted(made & have):
                d = first_diff(committed[os.path.join(folder, f)],
                               json.load(open(os.path.join(tmp, f))))
                if d:
                    problems.append(f"{f} differs from a fresh export: {d}")
            for p in problems:
                print(f"  {name}: {p}")
            print(f"{'FAIL' if problems else 'ok  '} models/{name} ({len(made)} bundles)")
            failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
