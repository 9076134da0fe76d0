"""Appends JSON metrics lines with a growing step to RUNJOB_METRICS_FILE as fast as it can for FLOOD_S seconds,
then prints how many lines and bytes it wrote."""
import json
import os
import time

import common

path = os.environ["RUNJOB_METRICS_FILE"]
end = time.monotonic() + float(os.environ.get("FLOOD_S", "10"))
n = 0
size = 0
with open(path, "a") as f:
    while time.monotonic() < end:
        block = "".join(json.dumps({"step": n + i, "loss": 1.0 / (n + i + 1)}) + "\n" for i in range(1000))
        f.write(block)
        n += 1000
        size += len(block)
print(f"rank {common.RANK} wrote {n} metrics lines, {size} bytes", flush=True)
