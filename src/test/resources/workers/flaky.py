"""Fails (exit 7) on attempt 0 on rank 1, succeeds otherwise; prints its attempt."""
import os
import sys

attempt = int(os.environ["RUNJOB_ATTEMPT"])
print(f"rank {os.environ['RANK']} attempt {attempt} restarts {os.environ['TORCHELASTIC_RESTART_COUNT']}", flush=True)
if attempt == 0 and os.environ["RANK"] == "1":
    sys.exit(7)
