#!/usr/bin/env python3
"""Environment benchmark: what an unchanged setup costs per node, and what a container start costs
beside a bare worker start; runjob and its peers interleaved in each round, every exit code checked.

Each round runs, one after the other:
  runjob bare        2 local nodes x 1 worker running python3 -c pass, no environment
  runjob setup       the same job with environment.setup (run once before the rounds: unchanged)
  runjob venv        the same job with a venv and a sourced script (activation on each node)
  runjob container   the same job, each worker in a podman container (skipped without podman)
  python direct      python3 -c pass started by hand, twice (what the 2 workers do)
  podman run         podman run --rm IMAGE python3 -c pass, twice (the peer of a container start)
Reported: median (min-max) of wall seconds and CPU-seconds (wait4 rusage of the process tree; a
container's own processes run under conmon and are not counted, so podman's CPU is a floor), and
what an unchanged setup and an activation add to a run (setup - bare, venv - bare; both nodes are
prepared at once, so this is also what one node adds).
The container rows need root, podman, runc and the test image's conf (CONTAINERS_CONF), as the
test suite makes them. Usage: bench/environment.py [--runs 7] [--json OUT]   (no timing is asserted)
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from common import spread, write_json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNJOB = os.path.join(ROOT, "bin", "runjob")
PYTHON = "/usr/bin/python3"
IMAGE = "localhost/runjob-bench:1"
CONF = "[containers]\ndefault_ulimits = [\"nofile=8192:8192\", \"nproc=4096:4096\"]\n[engine]\nruntime = \"runc\"\n"


def timed(cmd, env, cwd):
    """(exit code, wall s, CPU-s of the tree)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), time.monotonic() - t0, usage.ru_utime + usage.ru_stime


def twice(cmd, env, cwd):
    """cmd run twice at once, as 2 workers start: (first non-zero exit code, wall s, CPU-s)."""
    t0 = time.monotonic()
    procs = [subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(2)]
    code, cpu = 0, 0.0
    for p in procs:
        _, status, usage = os.wait4(p.pid, 0)
        code = code or os.waitstatus_to_exitcode(status)
        cpu += usage.ru_utime + usage.ru_stime
    return code, time.monotonic() - t0, cpu


def job(tmp, name, environment):
    lines = [f"name: {name}", "nodes:", "  - {name: n1, local: true, workers: 1}", "  - {name: n2, local: true, workers: 1}",
             "rendezvous: {port: auto}", f"entrypoint: {{command: [python3, -c, pass]}}", f"files: [{tmp}/env.sh]",
             f"workdir: {tmp}/work-{name}", f"logs: {{dir: {tmp}/runs}}"] + environment
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def image(tmp, env):
    """The bench's image: a small root file system imported without a registry; /usr comes from the host."""
    root = os.path.join(tmp, "rootfs")
    for d in ("tmp", "usr", "run", "proc", "sys", "dev", "etc"):
        os.makedirs(os.path.join(root, d))
    for link in ("bin", "lib", "lib64", "sbin"):
        os.symlink("usr/" + link, os.path.join(root, link))
    subprocess.run(["cp", "-a", "/etc/alternatives", "/etc/ld.so.cache", "/etc/passwd", "/etc/group", os.path.join(root, "etc")], check=True)
    subprocess.run(["tar", "-C", root, "-cf", root + ".tar", "."], check=True)
    subprocess.run(["podman", "import", "-q", root + ".tar", IMAGE], check=True, env=env, stdout=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json", help="also write the rows, machine, commit and date here")
    args = ap.parse_args()
    subprocess.run([RUNJOB, "--version"], check=True, stdout=subprocess.DEVNULL)  # builds the jar when needed
    tmp = tempfile.mkdtemp(prefix="runjob-bench-env-")
    env = dict(os.environ)
    with open(os.path.join(tmp, "env.sh"), "w") as f:
        f.write("export BENCH_FROM_SCRIPT=1\n")
    subprocess.run([PYTHON, "-m", "venv", "--system-site-packages", "--without-pip", f"{tmp}/venv"], check=True)
    tools = {
        "runjob bare": (lambda: timed([RUNJOB, job(tmp, "bare", [])], env, tmp)),
        "runjob setup": (lambda: timed([RUNJOB, job(tmp, "setup", ["environment: {setup: ['true']}"])], env, tmp)),
        "runjob venv": (lambda: timed([RUNJOB, job(tmp, "venv", [f"environment: {{venv: {tmp}/venv, source: [env.sh]}}"])], env, tmp)),
        "python direct": (lambda: twice([PYTHON, "-c", "pass"], env, tmp)),
    }
    if shutil.which("podman") and os.geteuid() == 0:
        with open(os.path.join(tmp, "containers.conf"), "w") as f:
            f.write(CONF)
        env["CONTAINERS_CONF"] = os.path.join(tmp, "containers.conf")
        image(tmp, env)
        container = [f"environment: {{container: {{image: '{IMAGE}', mounts: ['/usr:/usr:ro']}}}}"]
        tools["runjob container"] = lambda: timed([RUNJOB, job(tmp, "container", container)], env, tmp)
        tools["podman run"] = lambda: twice(["podman", "run", "--rm", "--network", "host", "--pid", "host", "--ipc", "host",
                                             "-v", "/usr:/usr:ro", IMAGE, "python3", "-c", "pass"], env, tmp)
    else:
        print("no podman, or not root: the container rows are left out", file=sys.stderr)
    code, _, _ = timed([RUNJOB, job(tmp, "setup", ["environment: {setup: ['true']}"])], env, tmp)  # setup runs once here
    if code != 0:
        sys.exit(f"the setup job's first run exited {code}")
    results = {t: [] for t in tools}
    for _ in range(args.runs):
        for t, run in tools.items():
            code, wall, cpu = run()
            if code != 0:
                sys.exit(f"{t} exited {code}")
            results[t].append((wall, cpu))
    print(f"bench/environment.py  {time.strftime('%Y-%m-%d')}  {os.cpu_count()} cores  runs={args.runs}")
    print(f"{'tool':<18} {'wall s':<20} {'CPU-s (tree)':<20}")
    rows = []
    for t, rs in results.items():
        walls, cpus = [r[0] for r in rs], [r[1] for r in rs]
        print(f"{t:<18} {spread(walls):<20} {spread(cpus):<20}")
        rows.append({"tool": t, "wall": spread(walls), "cpu": spread(cpus)})
    med = {t: statistics.median([r[0] for r in rs]) for t, rs in results.items()}
    derived = {"unchanged setup adds s (nodes at once)": med["runjob setup"] - med["runjob bare"],
               "venv + source adds s (nodes at once)": med["runjob venv"] - med["runjob bare"]}
    if "runjob container" in med:
        derived["container adds s (runjob, 2 workers at once)"] = med["runjob container"] - med["runjob bare"]
        derived["podman run over python direct s (2 at once)"] = med["podman run"] - med["python direct"]
    for k, v in derived.items():
        print(f"{k}: {v:.3f}")
    write_json(args.json, "environment", args.runs, rows, derived={k: round(v, 3) for k, v in derived.items()})
    if "CONTAINERS_CONF" in env:
        subprocess.run(["podman", "rmi", "-f", IMAGE], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
