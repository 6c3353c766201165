"""capture_step outside shardcheck-capture: it just calls fn."""
import os

from shardcheck.capture import capture_step

assert "SHARDCHECK_CAPTURE_DIR" not in os.environ
calls = []
print("result", capture_step(lambda a, b=0: calls.append(a) or a + b, 40, b=2), len(calls))
