"""Writes its pid file; prints "rank R step I" for I = 1..STEPS every 0.2 s, each time writing I to PIDDIR/rank-R.step; exits 0."""
import os
import time
import common

common.pidfile(f"rank-{common.RANK}.pid")
for i in range(1, int(os.environ.get("STEPS", "100")) + 1):
    print(f"rank {common.RANK} step {i}", flush=True)
    common.pidfile(f"rank-{common.RANK}.step", i)
    time.sleep(0.2)
