"""What the benches share: a median with its range, and the --json file every bench writes (its
rows, with the machine, commit and date), which bench/tables.py turns into the docs' tables."""
import json
import os
import statistics
import subprocess
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
