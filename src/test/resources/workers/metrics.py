"""Writes a metrics line per step to RUNJOB_METRICS_FILE: STEPS steps of STEP_S seconds (SLOW_RANK's
STEP_S + SLOW_S), each +-JITTER_S at random; a line that is not JSON after step 1 (GARBAGE); in
attempt 0, FAIL_RANK exits 3 after step FAIL_AT."""
import json
import os
import random
import sys
import time

from common import RANK

steps = int(os.environ.get("STEPS", "5"))
step_s = float(os.environ.get("STEP_S", "0.2"))
if RANK == int(os.environ.get("SLOW_RANK", "-1")):
    step_s += float(os.environ.get("SLOW_S", "0"))
jitter = float(os.environ.get("JITTER_S", "0"))
metrics_file = os.environ["RUNJOB_METRICS_FILE"]
if os.path.dirname(metrics_file):
    os.makedirs(os.path.dirname(metrics_file), exist_ok=True)
with open(metrics_file, "a") as out:
    for step in range(steps):
        time.sleep(max(0.0, step_s + random.uniform(-jitter, jitter)))
        out.write(json.dumps({"step": step, "loss": round(1.0 / (step + 1), 4)}) + "\n")
        out.flush()
        if os.environ.get("RUNJOB_ATTEMPT") == "0" and RANK == int(os.environ.get("FAIL_RANK", "-1")) \
                and step == int(os.environ.get("FAIL_AT", "-1")):
            sys.exit(3)
        if step == 1 and os.environ.get("GARBAGE"):
            out.write("loss=0.5 (not json)\n")
            out.flush()
print("rank", RANK, "wrote", steps, "steps", flush=True)
