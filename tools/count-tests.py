#!/usr/bin/env python3
"""count-tests.py — read meson's testlog.json and print "N passed, N failed".

A TAP test (our GTest programs run with --tap) counts each "ok"/"not ok"
line; a test that crashed before finishing its plan also counts one
failure.  Any other test counts once.  Skipped tests are reported apart.
Exit status 1 when anything failed or nothing ran."""
import json
import re
import sys

TAP_LINE = re.compile(r"^(not ok|ok)\b(.*)$")


def main(path):
    passed = failed = skipped = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            t = json.loads(line)
            result = t.get("result", "")
            out = t.get("stdout") or ""
            tap = [TAP_LINE.match(l) for l in out.splitlines()]
            tap = [m for m in tap if m]
            if tap and t.get("protocol", "tap") != "exitcode":
                for m in tap:
                    if "# SKIP" in m.group(2) or "# skip" in m.group(2):
                        skipped += 1
                    elif m.group(1) == "ok":
                        passed += 1
                    else:
                        failed += 1
                if result not in ("OK", "EXPECTEDFAIL", "SKIP") and \
                        not any(m.group(1) == "not ok" for m in tap):
                    failed += 1  # crashed, leaked or timed out after its cases
            elif result == "SKIP":
                skipped += 1
            elif result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            else:
                failed += 1
    line = f"{passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    print(line)
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build-test/meson-logs/testlog.json"))
