"""One run of a learning-rate sweep: gradient descent on a toy loss, w^2.

It saves its checkpoint in its current directory, which runjob makes the run's own
(WORKDIR/runs/RUN-ID): a restart of the same run, or `runjob resume RUN`, resumes it, and no
other run ever sees it. FAIL_AT_STEP=N exits 3 at step N of the run's first attempt, as a
crash would.
"""
import argparse
import json
import os
import time

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--steps", type=int, default=20)
args = parser.parse_args()

CHECKPOINT = "checkpoint.json"
w, step = 5.0, 0
if os.path.exists(CHECKPOINT):
    with open(CHECKPOINT) as f:
        saved = json.load(f)
    w, step = saved["w"], saved["step"]
    print(f"resumed at step {step}", flush=True)
fail_at = int(os.environ.get("FAIL_AT_STEP", "-1"))
while step < args.steps:
    if step == fail_at and os.environ.get("RUNJOB_ATTEMPT", "0") == "0":
        print(f"failing at step {step}", flush=True)
        raise SystemExit(3)
    w -= args.lr * 2 * w
    step += 1
    with open(CHECKPOINT + ".tmp", "w") as f:
        json.dump({"w": w, "step": step}, f)
    os.replace(CHECKPOINT + ".tmp", CHECKPOINT)
    time.sleep(float(os.environ.get("STEP_SECONDS", "0.1")))
print(f"lr {args.lr} on GPU {os.environ.get('CUDA_VISIBLE_DEVICES')}: loss {w * w:.6g} after {step} steps", flush=True)
