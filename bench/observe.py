#!/usr/bin/env python3
"""What watching a run costs: GPU sampling at the default interval (observe.interval_s: 5), at
0.05 s (100 times as often, so its cost stands above the runs' noise and can be scaled down) and
sampling off (0), interleaved in rounds, R rounds, each a run of 2 local nodes x 1 worker that sleeps
SECONDS s writing one metrics line a second (RUNJOB_METRICS_FILE, followed by its agent every
50 ms in both). The GPUs are the stand-in NVML of the tests (src/test/native/fakenvml.c, built
here; 2 GPUs a node), so the sampler's library calls run; a real driver's calls differ in cost.
Reported: median (min-max) CPU-seconds of the whole process tree (wait4 rusage: coordinator,
agents, workers) and wall seconds, per variant; the difference of the medians over the run's
length and per node is what sampling costs, in % of one core (the 0.05 s row's, divided by 100, is
the default's cost where the default's own difference is lost in the noise). Every exit code is checked.
Usage: bench/observe.py [--runs 3] [--seconds 20] [--json OUT]   (no timing is asserted anywhere)
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from common import spread, write_json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNJOB = os.path.join(ROOT, "bin", "runjob")
PYTHON = "/usr/bin/python3"
WORKER = """import json, os, time
with open(os.environ["RUNJOB_METRICS_FILE"], "a") as f:
    for step in range(int(os.environ["SECONDS_"])):
        time.sleep(1)
        f.write(json.dumps({"step": step, "loss": 1.0 / (step + 1)}) + "\\n")
        f.flush()
"""


def run(tmp, interval, seconds, env):
    job = os.path.join(tmp, f"observe-{interval}.yaml")
    with open(job, "w") as f:
        f.write("\n".join(["name: observe", "nodes:", "  - {name: n1, local: true, workers: 1}", "  - {name: n2, local: true, workers: 1}",
                           f"entrypoint: {{command: [{PYTHON}, worker.py]}}", f"files: [{tmp}/worker.py]",
                           f"workdir: {tmp}/work", f"logs: {{dir: {tmp}/runs}}", f"observe: {{interval_s: {interval}}}",
                           f"env: {{SECONDS_: '{seconds}'}}", ""]))
    t0 = time.monotonic()
    p = subprocess.Popen([RUNJOB, job], env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"runjob with observe.interval_s={interval} exited {code}")
    return time.monotonic() - t0, usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--json")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-observe-")
    with open(os.path.join(tmp, "worker.py"), "w") as f:
        f.write(WORKER)
    lib = os.path.join(tmp, "lib")
    os.makedirs(lib)
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", os.path.join(lib, "libnvidia-ml.so.1"),
                    os.path.join(ROOT, "src", "test", "native", "fakenvml.c")], check=True)
    env = dict(os.environ, LD_LIBRARY_PATH=lib,
               FAKECUDA_GPUS="Tesla V100-PCIE-16GB|16384|0|7.0|0000:3b:00;Tesla V100-PCIE-16GB|16384|0|7.0|0000:86:00")
    intervals = (5, 0.05, 0)
    results = {i: [] for i in intervals}
    for _ in range(a.runs):
        for interval in intervals:
            results[interval].append(run(tmp, interval, a.seconds, env))
    rows = []
    print(f"{a.runs} rounds, runs of {a.seconds} s on 2 local nodes x 1 worker; stand-in NVML, 2 GPUs a node")
    print(f"{'sampling':<22} {'wall s':<22} {'CPU-s (tree)':<22}")
    for interval in intervals:
        walls = [w for w, _ in results[interval]]
        cpus = [c for _, c in results[interval]]
        label = f"interval_s: {interval}" + {5: " (default)", 0: " (off)"}.get(interval, "")
        print(f"{label:<22} {spread(walls):<22} {spread(cpus, '{:.3f}'):<22}")
        rows.append({"sampling": label, "wall_s": walls, "cpu_s": cpus})
    off = statistics.median([c for _, c in results[0]])
    costs = {}
    for interval in (5, 0.05):
        extra = statistics.median([c for _, c in results[interval]]) - off
        costs[interval] = extra / a.seconds / 2 * 100
        print(f"interval_s {interval}: {extra:+.3f} CPU-s over {a.seconds} s on 2 nodes beside off: {costs[interval]:+.3f} % of one core per node")
    print(f"scaled from 0.05 s to the default 5 s: {costs[0.05] / 100:.4f} % of one core per node")
    write_json(a.json, "observe", a.runs, rows, per_node_pct_of_core={str(k): v for k, v in costs.items()}, seconds=a.seconds)


if __name__ == "__main__":
    main()
