"""Prints its rank and attempt; on attempt 0 writes its pid file and sleeps until stopped (a run
the scheduler will requeue), on a later attempt ends at once."""
import os
import common

attempt = int(os.environ["RUNJOB_ATTEMPT"])
print(f"rank {common.RANK} attempt {attempt} restarts {os.environ['TORCHELASTIC_RESTART_COUNT']}", flush=True)
if attempt == 0:
    common.pidfile(f"rank-{common.RANK}.pid")
    common.sleep_forever()
