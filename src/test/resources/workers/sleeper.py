"""Writes its pid file (rank-R.pid, or rank-R-TAG.pid with PID_TAG=TAG) and sleeps until stopped
(ignoring SIGTERM when IGNORE_TERM=1)."""
import os
import common

if os.environ.get("IGNORE_TERM") == "1":
    common.ignore_term()
tag = os.environ.get("PID_TAG")
common.pidfile(f"rank-{common.RANK}-{tag}.pid" if tag else f"rank-{common.RANK}.pid")
common.sleep_forever()
