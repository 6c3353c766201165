#!/usr/bin/python3
"""run-torch-missing.py — every test that needs torch fails under CI=true
when torch is missing, and is skipped (exit 77) otherwise (issue 19).

usage: run-torch-missing.py SRCDIR SHARDCHECK

Runs each torch test script with `python3 -S` (no site directories, so no
torch) twice: with CI=true it must exit 1 and say FAIL; without CI it must
exit 77 and say SKIP.  A test script that needs torch and is not listed
here is found by its `import torch` at the top level and fails this test."""
import glob
import os
import re
import subprocess
import sys

# the scripts meson runs that need torch, with their arguments
TORCH_TESTS = {
    "tests/export/test_exporter.py": [],
    "tests/export/test_models.py": [],
    "tests/capture/test_relation.py": [],
    "tests/capture/run_capture.py": ["{exe}", "{src}", "x"],
    "tests/shardsmith/test_shardsmith.py": ["{exe}"],
}


def main():
    src, exe = sys.argv[1], sys.argv[2]
    failed = 0
    # every top-level `import torch` in a test script must be listed
    for p in glob.glob(os.path.join(src, "tests", "*", "*.py")):
        rel = os.path.relpath(p, src)
        text = open(p, encoding="utf-8").read()
        if re.search(r"^( {4})?import torch\b", text, re.M) and rel not in TORCH_TESTS:
            print(f"FAIL: {rel} imports torch and is not checked here")
            failed += 1
    for rel, args in TORCH_TESTS.items():
        argv = [a.format(exe=exe, src=src) for a in args]
        for ci, want, word in (("true", 1, "FAIL"), (None, 77, "SKIP")):
            env = {k: v for k, v in os.environ.items() if k != "CI"}
            if ci:
                env["CI"] = ci
            r = subprocess.run([sys.executable, "-S", os.path.join(src, rel)] + argv, env=env,
                               capture_output=True, text=True, timeout=120)
            out = (r.stdout + r.stderr).strip()
            ok = r.returncode == want and out.startswith(word)
            print(f"{'ok' if ok else 'FAIL'}: {rel} CI={ci or ''}: exit {r.returncode} "
                  f"(want {want}): {out[:120]}")
            failed += not ok
    print("PASS" if not failed else f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
