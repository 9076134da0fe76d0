"""Rank 0 prints one line (with a tab and a long tail) and then nothing; every other rank prints a
tick every 0.2 s. Each writes its pid file first."""
import time
import common

common.pidfile(f"rank-{common.RANK}.pid")
if common.RANK == 0:
    print("rank 0 said\tthis once, and then a long tail that no table has room for", flush=True)
    common.sleep_forever()
n = 0
while True:
    print(f"rank {common.RANK} tick {n}", flush=True)
    n += 1
    time.sleep(0.2)
