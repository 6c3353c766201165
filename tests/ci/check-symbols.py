#!/usr/bin/python3
"""check-symbols.py — every global symbol that shardcheck's libraries
define carries the sc_ prefix (STYLE.md point 1; issue 19).

usage: check-symbols.py NM LIB...

Runs `NM -g --defined-only` on each static library (and `-D` on a shared
one) and fails on a strong definition (T, D, B, R, C) whose name neither
starts with `sc_` nor is reserved to the implementation (`__...`, the
sanitizers' and coverage's).  Weak symbols (W, V: C++ template and inline
instantiations of the cvc5 bridge) are not ours to name."""
import subprocess
import sys


def main():
    nm, libs = sys.argv[1], sys.argv[2:]
    bad = 0
    n = 0
    for lib in libs:
        args = [nm, "-g", "--defined-only"] + (["-D"] if ".so" in lib else []) + [lib]
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) != 3 or parts[1] not in "TDBRC":
                continue
            name = parts[2]
            n += 1
            if not name.startswith(("sc_", "__")):
                print(f"{lib}: global symbol without the sc_ prefix: {name}")
                bad += 1
    print(f"{n} global definitions in {len(libs)} libraries; "
          + ("PASS" if not bad else f"FAIL: {bad} without sc_"))
    return 1 if bad or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
