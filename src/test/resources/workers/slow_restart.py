"""Attempt 0: every rank writes its pid file; rank 1 waits for GO_FILE, then exits 7, the others sleep until stopped.
Any later attempt: each rank prints its attempt and exits 0."""
import os
import sys
import time
import common

attempt = int(os.environ["RUNJOB_ATTEMPT"])
if attempt > 0:
    print(f"rank {common.RANK} attempt {attempt} done", flush=True)
    sys.exit(0)
common.pidfile(f"rank-{common.RANK}.pid")
if common.RANK == 1:
    deadline = time.monotonic() + 60
    while not os.path.exists(os.environ["GO_FILE"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    sys.exit(7)
common.sleep_forever()
