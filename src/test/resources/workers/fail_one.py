"""FAIL_RANK waits FAIL_AFTER_S, writes 25 stderr lines and exits FAIL_CODE; every other rank ignores SIGTERM and sleeps."""
import os
import sys
import time
import common

common.pidfile(f"rank-{common.RANK}.pid")
if common.RANK == int(os.environ["FAIL_RANK"]):
    # wait until every rank is up, so the failure hits a running group
    world = int(os.environ["WORLD_SIZE"])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and sum(os.path.exists(os.path.join(common.PIDDIR, f"rank-{r}.pid")) for r in range(world)) < world:
        time.sleep(0.02)
    time.sleep(float(os.environ.get("FAIL_AFTER_S", "1")))
    print("about to fail", flush=True)
    for i in range(25):
        print(f"boom {i} from rank {common.RANK}", file=sys.stderr)
    sys.stderr.flush()
    if "FAILED_AT" in os.environ:  # the benchmark measures teardown from this instant
        with open(os.environ["FAILED_AT"], "w") as f:
            f.write(repr(time.time()))
    sys.exit(int(os.environ.get("FAIL_CODE", "3")))
if os.environ.get("IGNORE_TERM") == "1":
    common.ignore_term()
common.sleep_forever()
