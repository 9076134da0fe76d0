"""Each rank starts two grandchildren (one in its own session, escaping the process group) and sleeps; FAIL_RANK then fails."""
import os
import subprocess
import sys
import time
import common

plain = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(3600)"])
escaped = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(3600)"], start_new_session=True)
common.pidfile(f"grandchild-{common.RANK}.pid", plain.pid)
common.pidfile(f"escaped-{common.RANK}.pid", escaped.pid)
common.pidfile(f"rank-{common.RANK}.pid")
if common.RANK == int(os.environ.get("FAIL_RANK", "-1")):
    world = int(os.environ["WORLD_SIZE"])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and sum(os.path.exists(os.path.join(common.PIDDIR, f"rank-{r}.pid")) for r in range(world)) < world:
        time.sleep(0.02)
    sys.exit(5)
common.sleep_forever()
