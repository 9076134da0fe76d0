"""What the benches share: a median with its range, and the --json file every bench writes (its
rows, with the machine, commit and date), which bench/tables.py turns into the docs' tables."""
import atexit
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def spread(xs, fmt="{:.2f}"):
    """'median (min-max)' of xs."""
    return f"{fmt.format(statistics.median(xs))} ({fmt.format(min(xs))}-{fmt.format(max(xs))})"


def write_json(path, bench, runs, rows, **extra):
    """Writes {bench, runs, commit, date, machine, rows, ...extra} to PATH (nothing when PATH is None)."""
    if not path:
        return
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    with open(path, "w") as f:
        json.dump({"bench": bench, "runs": runs, "commit": commit, "date": time.strftime("%Y-%m-%d"),
                   "machine": f"{os.cpu_count()} cores", "rows": rows, **extra}, f, indent=1)


_RSS_DIR = []


def _rss_dir():
    """One temporary directory per bench for GNU time's outputs, removed when the bench exits."""
    if not _RSS_DIR:
        _RSS_DIR.append(tempfile.mkdtemp(prefix="bench-rss-"))
        atexit.register(shutil.rmtree, _RSS_DIR[0], True)
    return _RSS_DIR[0]


class PeakRss:
    """Peak RSS of a command's largest process, through GNU time, which forks it from its own small
    process. The wait4 rusage of a child the bench spawns is no use for this: the child starts as
    the bench's Python (vfork), so its ru_maxrss is never below the Python's own high-water mark
    (116 MiB in bench/ssh.py, from building the testbed)."""

    def __init__(self):
        self.time = shutil.which("time", path="/usr/bin:/bin")
        if not self.time:
            raise SystemExit("this bench needs GNU time for peak RSS (apt-get install time)")
        fd, self.out = tempfile.mkstemp(prefix="rss-", dir=_rss_dir())
        os.close(fd)

    def wrap(self, cmd):
        """CMD run under GNU time; its exit code is CMD's (128+N when a signal N ended it)."""
        return [self.time, "-q", "-f", "%M", "-o", self.out, *cmd]

    def last(self):
        """The peak RSS in MiB of the command wrapped last (after it was waited for)."""
        with open(self.out) as f:
            return int(f.read().split()[-1]) / 1024
