"""Writes results/rank-R.txt (rank 0 also links etcdir -> /etc, a hostile output path); with FAIL_RANK set, that rank exits 5 once every rank wrote its file, the others sleep."""
import os
import sys
import time
import common

os.makedirs("results", exist_ok=True)
if common.RANK == 0 and not os.path.lexists("etcdir"):
    os.symlink("/etc", "etcdir")
with open(f"results/rank-{common.RANK}.txt", "w") as f:
    f.write(f"rank {common.RANK} on {os.environ['RUNJOB_NODE']}\n")
if "FAIL_RANK" not in os.environ:
    sys.exit(0)
if common.RANK == int(os.environ["FAIL_RANK"]):
    world = int(os.environ["WORLD_SIZE"])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and sum(os.path.exists(os.path.join(common.PIDDIR, f"wrote-{r}")) for r in range(world)) < world - 1:
        time.sleep(0.02)
    sys.exit(5)
common.pidfile(f"wrote-{common.RANK}")
common.sleep_forever()
