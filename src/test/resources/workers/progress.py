"""Writes its pid file; prints "rank R step I" for I = 1..STEPS every 0.2 s, each time writing I to PIDDIR/rank-R.step; exits 0.

With HOLD set, it waits after its last step until the file PIDDIR/HOLD exists (5 minutes at most, then exits 3).
"""
import os
import time
import common

common.pidfile(f"rank-{common.RANK}.pid")
for i in range(1, int(os.environ.get("STEPS", "100")) + 1):
    print(f"rank {common.RANK} step {i}", flush=True)
    common.pidfile(f"rank-{common.RANK}.step", i)
    time.sleep(0.2)

hold = os.environ.get("HOLD")
if hold:
    deadline = time.monotonic() + 300
    while not os.path.exists(os.path.join(common.PIDDIR, hold)):
        if time.monotonic() > deadline:
            raise SystemExit(3)
        time.sleep(0.1)
