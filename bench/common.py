"""What the bench scripts share: reading a run's worker timings from runjob's summary.json."""
import json
import os
import re
from datetime import datetime


def instant(text):
    """Seconds since the epoch of a Java Instant such as 2026-12-01T07:10:21.706763639Z (any fraction length)."""
    m = re.match(r"(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$", text)
    return datetime.fromisoformat(m.group(1) + "+00:00").timestamp() + (float("0." + m.group(2)) if m.group(2) else 0.0)


def worker_seconds(job_runs):
    """First worker start to last worker end of the newest run under JOB_RUNS: the time output took to drain."""
    run = os.path.join(job_runs, sorted(os.listdir(job_runs))[-1])
    with open(os.path.join(run, "summary.json")) as f:
        ranks = json.load(f)["ranks"]
    return max(instant(r["end"]) for r in ranks) - min(instant(r["start"]) for r in ranks)
