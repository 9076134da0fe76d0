"""Rank 0 fails at start-up, once every rank is up; every other rank sleeps. CRASH_EXIT unset: an import that fails (the
same way every attempt); a number: that exit code; "attempt": exit 10 + RUNJOB_ATTEMPT (another
failure every attempt). CRASH_RANK=rotate: rank (3 * attempt + 1) % WORLD_SIZE fails instead of rank 0, so the
first rank to fail differs between attempts, as on a cluster where every rank fails alike and chance picks the first."""
import os
import sys
import time
import common

attempt = os.environ["RUNJOB_ATTEMPT"]
common.pidfile(f"rank-{common.RANK}.attempt-{attempt}.pid")
world = int(os.environ["WORLD_SIZE"])
failing = (3 * int(attempt) + 1) % world if os.environ.get("CRASH_RANK") == "rotate" else 0
if common.RANK == failing:
    # fail once every rank of the attempt is up, so the failure stops a running group
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not all(
            os.path.exists(os.path.join(common.PIDDIR, f"rank-{r}.attempt-{attempt}.pid")) for r in range(world)):
        time.sleep(0.02)
    how = os.environ.get("CRASH_EXIT")
    if how is None:
        import nosuchmodule_of_runjobs_tests  # noqa: F401
    code = 10 + int(os.environ["RUNJOB_ATTEMPT"]) if how == "attempt" else int(how)
    print(f"exiting {code} (pid {os.getpid()})", file=sys.stderr, flush=True)
    sys.exit(code)
common.sleep_forever()
