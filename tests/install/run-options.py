#!/usr/bin/env python3
"""run-options.py EXE SRC -- the man page (docs/shardcheck.1) and the bash
completion (completions/shardcheck.bash) list every command and option
that the CLI has: each command's `--help-all` is read and each long option
must appear in both (hidden options, absent from --help-all, are exempt)."""
import re
import subprocess
import sys

COMMANDS = [["check"], ["show"], ["ops"], ["lemmas", "check"]]


def main():
    exe, src = sys.argv[1:3]
    man = open(f"{src}/docs/shardcheck.1").read().replace("\\-", "-")
    comp = open(f"{src}/completions/shardcheck.bash").read()
    missing = []
    for cmd in COMMANDS:
        if f".B {cmd[0]}" not in man and f"shardcheck {cmd[0]}" not in man:
            missing.append(f"man: command {' '.join(cmd)}")
        if cmd[0] not in comp:
            missing.append(f"completion: command {cmd[0]}")
        r = subprocess.run([exe, *cmd, "--help-all"], capture_output=True, text=True, timeout=60)
        opts = sorted(set(re.findall(r"^\s+(?:-\w, )?(--[a-z][a-z0-9-]*)", r.stdout, re.M)))
        if not opts:
            missing.append(f"{' '.join(cmd)} --help-all lists no option")
        for o in opts:
            if o.startswith("--help"):
                continue
            if o not in man:
                missing.append(f"man: {' '.join(cmd)} {o}")
            if o not in comp:
                missing.append(f"completion: {' '.join(cmd)} {o}")
        print(" ".join(cmd), opts)
    if missing:
        print("FAIL: not documented:\n  " + "\n  ".join(missing))
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
