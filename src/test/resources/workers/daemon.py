"""Rank 0 starts a daemon that leaves every trace of its worker behind: double fork, setsid, all
fds closed, an environment holding only PATH (so no RUNJOB_WORKER_ID). Every rank then writes its
pid file and, with THEN=exit, exits 0 once the daemon's pid file exists; else it sleeps (ignoring
SIGTERM when IGNORE_TERM=1)."""
import os
import time
import common

if common.RANK == 0:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            common.pidfile("daemon-0.pid")
            os.closerange(0, 65536)
            os.execve("/bin/sh", ["sh", "-c", "exec sleep 3600"], {"PATH": "/usr/bin:/bin"})
        os._exit(0)
    os.wait()
if os.environ.get("IGNORE_TERM") == "1":
    common.ignore_term()
common.pidfile(f"rank-{common.RANK}.pid")
if os.environ.get("THEN") == "exit":
    deadline = time.monotonic() + 30
    while not os.path.exists(os.path.join(common.PIDDIR, "daemon-0.pid")) and time.monotonic() < deadline:
        time.sleep(0.02)
    raise SystemExit(0)
common.sleep_forever()
