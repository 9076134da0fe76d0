#!/usr/bin/env python3
"""Local-launch benchmark: runjob against torchrun and against no launcher at all, in one run.

Prints one table. Scenarios (4 workers each, on this machine):
  startup   wall time of the check-in job (jobs/local.yaml) end to end
  teardown  time from one worker's failure (it records the instant) to the launcher's exit,
            while the other workers sleep
  output    4 workers x LINES lines through the launcher's console into a file (timed from the
            first worker's start to the last one's end, from summary.json), against the same workers
            writing straight to files; lines/s and MB/s
Usage: bench/local.py [--runs N] [--lines N]      (needs python3; torchrun rows need PyTorch)
Not a test: numbers depend on the machine; nothing here asserts a timing.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from common import worker_seconds

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNJOB = os.path.join(ROOT, "bin", "runjob")
WORKERS = os.path.join(ROOT, "src", "test", "resources", "workers")
TORCHRUN = shutil.which("torchrun")


def run(cmd, env=None, stdout=subprocess.DEVNULL, cwd=None):
    start = time.monotonic()
    p = subprocess.run(cmd, env=env, stdout=stdout, stderr=subprocess.DEVNULL, cwd=cwd)
    return time.monotonic() - start, p.returncode


def maxrss_kib(cmd, env=None, cwd=None):
    """Peak RSS of the largest single process of the command's tree (GNU time), in KiB."""
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    return int(out.stderr.strip().splitlines()[-1])


def job_file(tmp, name, script, env, grace=5):
    lines = [f"name: {name}", "nodes:", "  - {name: n1, local: true, workers: 2}", "  - {name: n2, local: true, workers: 2}",
             "rendezvous: {port: auto}", f"entrypoint: {{command: [python3, {script}]}}",
             f"files: [{WORKERS}/common.py, {WORKERS}/{script}]", f"workdir: {tmp}/work-{name}",
             f"logs: {{dir: {tmp}/runs}}", f"failure: {{grace_period_s: {grace}}}", "env:"]
    lines += [f"  {k}: '{v}'" for k, v in env.items()]
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--lines", type=int, default=500_000)
    args = ap.parse_args()
    subprocess.run([RUNJOB, "--version"], check=True, stdout=subprocess.DEVNULL)  # builds the jar when needed
    tmp = tempfile.mkdtemp(prefix="runjob-bench-")
    rows = []
    base_env = dict(os.environ)

    # startup: the quick-start job
    local = [RUNJOB, "--set", f"logs.dir={tmp}/runs", "--set", f"workdir={tmp}/work", os.path.join(ROOT, "jobs", "local.yaml")]
    times = [run(local)[0] for _ in range(args.runs)]
    rows.append(("startup", "runjob jobs/local.yaml (2 nodes x 2)", f"{median(times):.2f} s", f"min {min(times):.2f} s"))
    rss = maxrss_kib(local)
    rows.append(("memory", "runjob, largest process (coordinator or agent)", f"{rss / 1024:.0f} MiB", "peak RSS"))
    if TORCHRUN:
        checkin = os.path.join(ROOT, "examples", "checkin", "checkin.py")
        env = dict(base_env, RUNJOB_NODE="local")
        cmd = [TORCHRUN, "--standalone", "--nproc_per_node", "4", checkin]
        times = [run(cmd, env=env)[0] for _ in range(args.runs)]
        rows.append(("startup", "torchrun --standalone --nproc_per_node 4", f"{median(times):.2f} s", f"min {min(times):.2f} s"))
        rows.append(("memory", "torchrun, largest process", f"{maxrss_kib(cmd, env=env) / 1024:.0f} MiB", "peak RSS"))

    # teardown after a failure: rank 1 fails 1 s after all are up; the rest sleep (they do not ignore SIGTERM)
    stamp = os.path.join(tmp, "failed-at")
    fail_env = {"FAIL_RANK": "1", "FAIL_AFTER_S": "1", "PIDDIR": tmp}
    job = job_file(tmp, "teardown", "fail_one.py", fail_env)
    tears = []
    for i in range(args.runs):
        for f in os.listdir(tmp):
            if f.endswith(".pid"):
                os.remove(os.path.join(tmp, f))
        env = dict(base_env, FAILED_AT=stamp)
        run([RUNJOB, job], env=env)
        with open(stamp) as f:
            failed = float(f.read())
        tears.append(time.time() - failed)
    rows.append(("teardown", "runjob: failure -> exit, 3 others stopped", f"{median(tears) * 1000:.0f} ms", f"min {min(tears) * 1000:.0f} ms"))
    if TORCHRUN:
        tears = []
        for i in range(args.runs):
            for f in os.listdir(tmp):
                if f.endswith(".pid"):
                    os.remove(os.path.join(tmp, f))
            env = dict(base_env, **fail_env, RUNJOB_NODE="local", PYTHONPATH=WORKERS, FAILED_AT=stamp)
            run([TORCHRUN, "--standalone", "--nproc_per_node", "4", os.path.join(WORKERS, "fail_one.py")], env=env, cwd=tmp)
            with open(stamp) as f:
                failed = float(f.read())
            tears.append(time.time() - failed)
        rows.append(("teardown", "torchrun: failure -> exit", f"{median(tears) * 1000:.0f} ms", f"min {min(tears) * 1000:.0f} ms"))

    # output throughput
    n = args.lines
    total_bytes = sum(len(f"rank {r} line {i}\n") + (len(f"rank {r} err {i}\n") if i % 1000 == 0 else 0)
                      for r in range(4) for i in range(n))
    job = job_file(tmp, "output", "lines.py", {"LINES": str(n), "PIDDIR": tmp})
    with open(os.path.join(tmp, "console.out"), "wb") as out:
        wall, _ = run([RUNJOB, job], stdout=out)
    t = worker_seconds(os.path.join(tmp, "runs", "output"))
    rows.append(("output", f"runjob: 4 x {n} lines, console to a file (workers' run)", f"{4 * n / t / 1e6:.2f} M lines/s", f"{total_bytes / t / 1e6:.0f} MB/s"))
    rows.append(("output", "runjob: the same, wall time incl. start-up", f"{wall:.2f} s", ""))
    start = time.monotonic()
    procs = []
    for r in range(4):
        f = open(os.path.join(tmp, f"direct-{r}.out"), "wb")
        procs.append(subprocess.Popen([sys.executable, os.path.join(WORKERS, "lines.py")], stdout=f, stderr=f,
                                      env=dict(base_env, RANK=str(r), LINES=str(n))))
    for p in procs:
        p.wait()
    t = time.monotonic() - start
    rows.append(("output", f"no launcher: 4 x {n} lines straight to files", f"{4 * n / t / 1e6:.2f} M lines/s", f"{total_bytes / t / 1e6:.0f} MB/s"))
    if TORCHRUN:
        with open(os.path.join(tmp, "torchrun.out"), "wb") as out:
            t, _ = run([TORCHRUN, "--standalone", "--nproc_per_node", "4", os.path.join(WORKERS, "lines.py")],
                       env=dict(base_env, LINES=str(n)), stdout=out)
        rows.append(("output", f"torchrun: 4 x {n} lines, console to a file", f"{4 * n / t / 1e6:.2f} M lines/s", f"{total_bytes / t / 1e6:.0f} MB/s"))

    widths = [max(len(str(r[i])) for r in rows + [("scenario", "what", "median", "note")]) for i in range(4)]
    header = ("scenario", "what", "result", "note")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
