"""Prints LINES lines 'rank R line I' to stdout, every 1000th also to stderr, as fast as it can; with SPREAD_S,
each line flushed on its own and the lines spread over that many seconds (a worker that prints for a while)."""
import os
import sys
import time

rank = int(os.environ["RANK"])
n = int(os.environ["LINES"])
spread = float(os.environ.get("SPREAD_S", "0"))
out = sys.stdout
err = sys.stderr
begin = time.monotonic()
for i in range(n):
    out.write(f"rank {rank} line {i}\n")
    if i % 1000 == 0:
        err.write(f"rank {rank} err {i}\n")
    if spread:
        out.flush()
        ahead = begin + spread * (i + 1) / n - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
out.flush()
err.flush()
