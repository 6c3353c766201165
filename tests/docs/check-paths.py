#!/usr/bin/python3
"""check-paths.py — docs/ and README.md name files by paths relative to the
repository, never by one machine's absolute paths (issue 19): no
/work/..., /home/..., /root/..., /Users/..., nor an absolute path to the
shared spec or real-graph folders (use ../shared/... or shared/...).
Example output paths under /tmp and system paths (/usr/bin/python3,
/dev/zero) are fine.

usage: check-paths.py SRCDIR"""
import glob
import os
import re
import sys

BAD = re.compile(r"(?<![\w.~-])(/work/|/home/|/root/|/Users/|/mnt/|/[\w.-]+(/[\w.-]+)*/shared/(spec|real-graphs)\b)")


def main():
    src = sys.argv[1]
    files = sorted(glob.glob(os.path.join(src, "docs", "**", "*.md"), recursive=True))
    files += [os.path.join(src, "README.md"), os.path.join(src, "docs", "shardcheck.1")]
    bad = 0
    for f in files:
        if not os.path.exists(f):
            continue
        for n, line in enumerate(open(f, encoding="utf-8"), 1):
            m = BAD.search(line)
            if m:
                print(f"{os.path.relpath(f, src)}:{n}: absolute path {m.group(0)!r}: {line.strip()[:120]}")
                bad += 1
    print("PASS" if not bad else f"FAIL: {bad} absolute path(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
