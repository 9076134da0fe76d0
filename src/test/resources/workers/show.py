"""Prints its rank and the first line of data.txt in its workdir; with HOLD=1 it then writes its
pid file and sleeps until stopped."""
import os
import common

with open("data.txt") as f:
    data = f.readline().strip()
print(f"rank {common.RANK} data {data}", flush=True)
if os.environ.get("HOLD") == "1":
    common.pidfile(f"rank-{common.RANK}.pid")
    common.sleep_forever()
