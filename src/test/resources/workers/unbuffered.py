"""Prints "ready RANK" without flushing, then waits (up to 30 s) for the file GO_FILE and exits 0:
the line reaches the logs during the run only when Python's output is unbuffered."""
import os
import time
import common

print(f"ready {common.RANK}")
deadline = time.monotonic() + 30
while not os.path.exists(os.environ["GO_FILE"]) and time.monotonic() < deadline:
    time.sleep(0.05)
raise SystemExit(0 if os.path.exists(os.environ["GO_FILE"]) else 9)
