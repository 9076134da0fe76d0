"""A trainer that checkpoints: STEPS steps of STEP_S seconds, its last finished step saved after each
in CKPT/rank-R (a directory every node shares), resumed from there by a later attempt, and reported as
{"step": N} in RUNJOB_METRICS_FILE. Writes its pid file once it runs; prints where it starts and when it is done."""
import os
import time
import common

ckpt = os.path.join(os.environ["CKPT"], f"rank-{common.RANK}")
step = int(open(ckpt).read()) if os.path.exists(ckpt) else 0
attempt = os.environ["RUNJOB_ATTEMPT"]
print(f"rank {common.RANK} of {os.environ['WORLD_SIZE']} attempt {attempt} on {os.environ['RUNJOB_NODE']}"
      f" node rank {os.environ['NODE_RANK']} master {os.environ['MASTER_ADDR']} resumes at step {step}", flush=True)
common.pidfile(f"rank-{common.RANK}.pid")
metrics = open(os.environ["RUNJOB_METRICS_FILE"], "a", buffering=1) if "RUNJOB_METRICS_FILE" in os.environ else None
if metrics:
    metrics.write(f'{{"step": {step}}}\n')
while step < int(os.environ["STEPS"]):
    time.sleep(float(os.environ["STEP_S"]))
    step += 1
    with open(ckpt + ".tmp", "w") as f:
        f.write(str(step))
    os.replace(ckpt + ".tmp", ckpt)
    if metrics:
        metrics.write(f'{{"step": {step}}}\n')
print(f"rank {common.RANK} done at step {step}", flush=True)
