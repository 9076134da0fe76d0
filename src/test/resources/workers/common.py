"""Helpers for the test workers: pid files, ignoring SIGTERM, sleeping until killed."""
import os
import signal
import time

RANK = int(os.environ["RANK"])
PIDDIR = os.environ.get("PIDDIR", ".")


def pidfile(name, pid=None):
    path = os.path.join(PIDDIR, name)
    with open(path + ".tmp", "w") as f:
        f.write(str(pid or os.getpid()))
    os.rename(path + ".tmp", path)


def ignore_term():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def sleep_forever():
    while True:
        time.sleep(3600)
