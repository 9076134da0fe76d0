"""Prints LINES lines 'rank R line I' to stdout, every 1000th also to stderr, as fast as it can."""
import os
import sys

rank = int(os.environ["RANK"])
n = int(os.environ["LINES"])
out = sys.stdout
err = sys.stderr
for i in range(n):
    out.write(f"rank {rank} line {i}\n")
    if i % 1000 == 0:
        err.write(f"rank {rank} err {i}\n")
out.flush()
err.flush()
