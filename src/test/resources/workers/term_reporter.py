"""Prints a line a second; on SIGTERM prints "rank R got TERM" and exits 0."""
import signal
import sys
import time
import common


def term(signum, frame):
    print(f"rank {common.RANK} got TERM", flush=True)
    sys.exit(0)


signal.signal(signal.SIGTERM, term)
common.pidfile(f"rank-{common.RANK}.pid")
n = 0
while True:
    print(f"rank {common.RANK} tick {n}", flush=True)
    n += 1
    time.sleep(1)
