"""Writes its pid file and sleeps until stopped (ignoring SIGTERM when IGNORE_TERM=1)."""
import os
import common

if os.environ.get("IGNORE_TERM") == "1":
    common.ignore_term()
common.pidfile(f"rank-{common.RANK}.pid")
common.sleep_forever()
