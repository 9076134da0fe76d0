"""For the lab page's tests: in attempt 0, rank 0 writes 3 metrics lines and exits 3 (a restart).
In the next attempt rank 0 prints two lines of markup first, then every rank writes a metrics line
({"step", "loss", "max_steps": MAX_STEPS}) and prints "tick N" every STEP_S seconds; rank 0 also
prints the text of SAY_FILE whenever it appears (and removes it), until STOP_FILE appears or
MAX_STEPS steps."""
import json
import os
import sys
import time

from common import RANK

step_s = float(os.environ.get("STEP_S", "0.2"))
max_steps = int(os.environ.get("MAX_STEPS", "3000"))
say = os.environ.get("SAY_FILE", "")
stop = os.environ.get("STOP_FILE", "")
attempt = os.environ.get("RUNJOB_ATTEMPT", "0")
metrics = open(os.environ["RUNJOB_METRICS_FILE"], "a")


def metric(step):
    metrics.write(json.dumps({"step": step, "loss": round(2.0 / (step + 1), 4), "max_steps": max_steps}) + "\n")
    metrics.flush()


if attempt == "0":
    for step in range(3):
        time.sleep(step_s)
        metric(step)
    if RANK == 0:
        print("attempt 0 fails on purpose", flush=True)
        sys.exit(3)
    time.sleep(60)
    sys.exit(0)

if RANK == 0:
    print('<img src=x onerror="document.body.setAttribute(\'data-pwned\', \'img\')">', flush=True)
    print('</script><script>document.body.setAttribute("data-pwned", "script")</script>', flush=True)
for step in range(max_steps):
    if stop and os.path.exists(stop):
        break
    metric(step)
    print("tick", step, flush=True)
    deadline = time.monotonic() + step_s
    while time.monotonic() < deadline:
        if RANK == 0 and say and os.path.exists(say):
            with open(say) as f:
                text = f.read().strip()
            os.remove(say)
            print(text, flush=True)
        time.sleep(0.01)
print("rank", RANK, "done", flush=True)
