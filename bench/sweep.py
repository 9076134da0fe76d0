#!/usr/bin/env python3
"""Sweep benchmark: a learning-rate sweep on one GPU server, runjob against the hand-made way, interleaved.

The server is this machine with GPUS GPUs described to the stand-in CUDA driver (src/test/native/
fakecuda.c, built here with cc), so no GPU is needed. The work is examples/sweep/train.py (20 steps
of STEP_SECONDS) once per learning rate, RUNS_PER_SWEEP values, one GPU per run. Each round runs,
one after the other:
  runjob sweep   `runjob jobs/sweep.yaml` with the values as its sweep: one run per value, each on a
                 free GPU it leases (a run waits when all are taken), its own directory, run folder
                 and record, a table at the end
  bash loop      what people type: `CUDA_VISIBLE_DEVICES=i python3 train.py --lr X &` per value, each
                 in a directory of its own, GPUs handed out round-robin by hand, then `wait`
                 (no leases: two loops at once would share GPUs; no records, no table)
and reports per tool the median and min-max of wall seconds and CPU-seconds (the command and every
child it reaped: runjob's runs, agents and workers; the loop's workers), and the ratios. Every exit
code is checked, and every run must print its final line.
Usage: bench/sweep.py [--runs 5] [--values 3] [--gpus 2] [--step-seconds 0.1] [--json OUT]
"""
import argparse
import atexit
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time

from common import spread, write_json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNJOB = os.path.join(ROOT, "bin", "runjob")
TRAIN = os.path.join(ROOT, "examples", "sweep", "train.py")


def child_cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def timed(cmd, env, cwd):
    """(wall s, CPU-s, stdout) of CMD; exits when it fails."""
    c0 = child_cpu()
    start = time.monotonic()
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = time.monotonic() - start
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr.decode(errors='replace')[-3000:]}")
    return wall, child_cpu() - c0, p.stdout.decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--values", type=int, default=3)
    ap.add_argument("--gpus", type=int, default=2)
    ap.add_argument("--step-seconds", type=float, default=0.1)
    ap.add_argument("--json", help="also write the rows, machine, commit and date here")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="runjob-bench-sweep-")
    atexit.register(shutil.rmtree, tmp, True)  # its runs, archives and jars: nothing is kept
    lib = os.path.join(tmp, "fakecuda")
    os.makedirs(lib)
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", os.path.join(lib, "libcuda.so.1"),
                    os.path.join(ROOT, "src", "test", "native", "fakecuda.c")], check=True)
    gpus = ";".join(f"Tesla V100-PCIE-16GB|16384|0|7.0|0000:{i + 1:02x}:00" for i in range(a.gpus))
    env = dict(os.environ, LD_LIBRARY_PATH=lib, FAKECUDA_GPUS=gpus, RUNJOB_GPU_LEASES=os.path.join(tmp, "leases"),
               HOME=os.path.join(tmp, "home"), STEP_SECONDS=str(a.step_seconds))
    os.makedirs(env["HOME"])
    lrs = [f"{0.1 / 10 ** i:g}" for i in range(a.values)]
    subprocess.run([RUNJOB, "--version"], env=env, check=True, stdout=subprocess.DEVNULL)  # builds the jar once, untimed
    # every run's exit code counts: wait for each by pid
    loop = " ".join(f"(mkdir -p d{i} && cd d{i} && CUDA_VISIBLE_DEVICES={i % a.gpus} exec python3 {TRAIN} --lr {lr}) & pids+=($!);"
                    for i, lr in enumerate(lrs)) + ' for p in "${pids[@]}"; do wait "$p" || exit 1; done'
    results = {"runjob sweep": ([], []), "bash loop": ([], [])}
    for r in range(a.runs):
        for tool in results:
            cwd = os.path.join(tmp, f"{tool.split()[0]}-{r}")
            os.makedirs(cwd)
            if tool == "runjob sweep":
                cmd = [RUNJOB, "--set", f"sweep.lr=[{', '.join(lrs)}]", "--set", f"env.STEP_SECONDS={a.step_seconds}",
                       os.path.join(ROOT, "jobs", "sweep.yaml")]
            else:
                cmd = ["bash", "-c", loop]
            wall, cpu, out = timed(cmd, env, cwd)
            done = out.count("after 20 steps")  # the loop's runs share one pipe: their lines may run together
            if done != a.values:
                raise SystemExit(f"{tool}: {done} of {a.values} runs ended:\n{out}")
            results[tool][0].append(wall)
            results[tool][1].append(cpu)
    print(f"{a.values} runs of 20 steps x {a.step_seconds} s on {a.gpus} stand-in GPUs, {a.runs} interleaved rounds\n")
    print("| tool | wall s | CPU-s |")
    print("|---|---|---|")
    med = {}
    rows = []
    for tool, (walls, cpus) in results.items():
        med[tool] = (statistics.median(walls), statistics.median(cpus))
        rows.append({"tool": tool, "wall": spread(walls), "cpu": spread(cpus)})
        print(f"| {tool} | {rows[-1]['wall']} | {rows[-1]['cpu']} |")
    rw = med["runjob sweep"][0] / med["bash loop"][0]
    rc = med["runjob sweep"][1] / med["bash loop"][1]
    print(f"| ratio runjob / bash | {rw:.1f}x | {rc:.1f}x |")
    rows.append({"tool": "ratio runjob / bash", "wall": f"{rw:.1f}x", "cpu": f"{rc:.1f}x"})
    write_json(a.json, "sweep", a.runs, rows, values=a.values, gpus=a.gpus, step_seconds=a.step_seconds)


if __name__ == "__main__":
    main()
