"""Writes its pid file, prints "rank R tick I" for I = 1..TICKS every 0.1 s, exits 0."""
import os
import time
import common

common.pidfile(f"rank-{common.RANK}.pid")
for i in range(1, int(os.environ.get("TICKS", "20")) + 1):
    print(f"rank {common.RANK} tick {i}", flush=True)
    time.sleep(0.1)
