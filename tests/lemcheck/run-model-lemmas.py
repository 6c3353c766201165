#!/usr/bin/env python3
"""run-model-lemmas.py SHARDCHECK SOURCE_ROOT: `lemmas check` on the
library plus every model folder that ships *.lemma files (run-model.py
loads a folder's lemma files with --lemmas for its bundles, so they must
pass the same numeric check as the library's).  Ends with the suite's
`N passed, N failed` line."""
import glob
import os
import subprocess
import sys

shardcheck, root = sys.argv[1], sys.argv[2]
dirs = sorted({os.path.dirname(p) for p in glob.glob(os.path.join(root, "models", "*", "*.lemma"))})
if not dirs:
    print("no model folder ships lemma files: nothing to check (expected some)")
    print("0 passed, 1 failed")
    sys.exit(1)
args = [shardcheck, "lemmas", "check"]
for d in dirs:
    args += ["--lemmas", d]
r = subprocess.run(args, capture_output=True, text=True)
print("folders:", ", ".join(os.path.relpath(d, root) for d in dirs))
print(r.stdout[-3000:])
print(r.stderr[-2000:])
ok = r.returncode == 0
print("1 passed, 0 failed" if ok else "0 passed, 1 failed")
sys.exit(0 if ok else 1)
