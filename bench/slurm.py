#!/usr/bin/env python3
"""Slurm benchmark: runjob's Slurm backend against plain srun, interleaved in pairs, same layouts.

Builds a throw-away Slurm cluster on this machine (munged, slurmctld and 3 slurmd on 127.0.0.1,
KillWait=5), then runs R rounds of each case, runjob and its peer one after the other:
  launch 3x1     a trivial job (`true`), one task per node on 3 nodes:
                 runjob JOB  vs  srun -N3 -n3 -w b1,b2,b3 true
  launch 2+1     the same, 2 tasks on b1 and 1 on b2 (runjob's unequal nodes):
                 runjob JOB  vs  SLURM_HOSTFILE=H srun -m arbitrary -n3 --cpu-bind=none true
  fail-fast      3 tasks (2+1); rank 1 exits 3 once all are up, the others sleep: seconds from the
                 failing task's exit (it writes the time) to the launcher's exit:
                 runjob JOB  vs  srun --kill-on-bad-exit=1 (same hostfile)
  submit 3x1     the trivial job queued as a batch job, until it has ended (the run's exit code):
                 runjob submit JOB; runjob logs -f RUN  vs  sbatch --wait -N3 -n3 -w b1,b2,b3 --wrap 'srun true'
  submit --wait  the same in one runjob: runjob submit --wait JOB  vs  the same sbatch --wait
Reported per tool: median (min-max) wall seconds, client CPU-seconds (the launcher and its
children, wait4 rusage), cluster CPU-seconds (this machine's CPU time during the run minus the
client's: slurmctld, slurmd, slurmstepd, runjob's agents and the tasks), and the runjob/peer
ratio of the medians. Every exit code is checked: launch wants 0 from both; fail-fast wants
runjob's 1 and a non-zero srun, and the failing rank's time stamp.
Needs root, slurm-wlm, munge, a JDK. Usage: sudo bench/slurm.py [--runs 5] [--json OUT]
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from common import write_json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNJOB = os.path.join(ROOT, "bin", "runjob")
PORT = 17100
NODES = ["b1", "b2", "b3"]

WORKER = r'''
import os, sys, time
rank = int(os.environ.get("RANK", os.environ.get("SLURM_PROCID", "0")))
world = int(os.environ.get("WORLD_SIZE", os.environ.get("SLURM_NTASKS", "1")))
d = os.environ["BENCH_DIR"]
open(os.path.join(d, f"up-{rank}"), "w").close()
if rank == 1:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and sum(os.path.exists(os.path.join(d, f"up-{r}")) for r in range(world)) < world:
        time.sleep(0.01)
    with open(os.path.join(d, "failed-at"), "w") as f:
        f.write(repr(time.time()))
    sys.exit(3)
time.sleep(600)
'''


def sh(*argv, env=None, check=True):
    return subprocess.run(argv, env=env, check=check, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout


def machine_cpu():
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def cluster_up(d):
    env = dict(os.environ, SLURM_CONF=f"{d}/slurm.conf")
    for sub in ("state", "log", "run"):
        os.makedirs(f"{d}/{sub}", exist_ok=True)
    conf = f"""ClusterName=bench
SlurmctldHost=localhost
SlurmctldPort={PORT}
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation={d}/state/ctld
SlurmdSpoolDir={d}/state/%n
SlurmctldPidFile={d}/run/slurmctld.pid
SlurmdPidFile={d}/run/slurmd-%n.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd-%n.log
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup,task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
KillWait=5
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=b[1-3] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[{PORT + 11}-{PORT + 13}] CPUs=4 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""
    with open(f"{d}/slurm.conf", "w") as f:
        f.write(conf)
    with open(f"{d}/cgroup.conf", "w") as f:
        f.write("CgroupPlugin=autodetect\nConstrainCores=no\nConstrainRAMSpace=no\nConstrainDevices=no\n")
    if subprocess.run("munge -n </dev/null | unmunge >/dev/null 2>&1", shell=True).returncode != 0:
        os.makedirs("/run/munge", exist_ok=True)
        shutil.chown("/run/munge", "munge", "munge")
        sh("runuser", "-u", "munge", "--", "/usr/sbin/munged")
    sh("slurmctld", "-f", f"{d}/slurm.conf", env=env)
    for n in NODES:
        os.makedirs(f"{d}/state/{n}", exist_ok=True)
        sh("slurmd", "-f", f"{d}/slurm.conf", "-N", n, env=env)
    deadline = time.monotonic() + 60
    while sh("sinfo", "-h", "-o", "%T %D", env=env, check=False).strip() != f"idle {len(NODES)}":
        if time.monotonic() > deadline:
            sys.exit("the bench cluster did not come up:\n" + sh("sinfo", "-N", env=env, check=False))
        time.sleep(0.1)
    return env


def cluster_down(d, env):
    sh("scancel", "--user=root", env=env, check=False)
    deadline = time.monotonic() + 15
    while sh("squeue", "-h", env=env, check=False).strip() and time.monotonic() < deadline:
        time.sleep(0.1)
    sh("scontrol", "shutdown", env=env, check=False)
    time.sleep(1)
    for n in NODES:
        subprocess.run(f"find /sys/fs/cgroup/*/slurm_{n} -depth -type d -exec rmdir {{}} \\; 2>/dev/null", shell=True)


def timed(argv, env, cwd):
    """Runs argv; returns (exit code, wall s, client CPU-s, cluster CPU-s, output)."""
    cpu0 = machine_cpu()
    t0 = time.monotonic()
    p = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    client = usage.ru_utime + usage.ru_stime
    return os.waitstatus_to_exitcode(status), wall, client, max(0.0, machine_cpu() - cpu0 - client), out


def job_file(d, name, layout, command, extra=""):
    nodes = "".join(f"  - {{name: {n}, workers: {w}}}\n" for n, w in layout)
    path = f"{d}/{name}.yaml"
    with open(path, "w") as f:
        f.write(f"name: {name}\nbackend: slurm\nnodes:\n{nodes}entrypoint: {{command: [{', '.join(command)}]}}\n"
                f"workdir: {d}/work\nlogs: {{dir: {d}/runs}}\nrendezvous: {{port: auto}}\n{extra}")
    return path


def hostfile(d, layout):
    path = f"{d}/hosts"
    with open(path, "w") as f:
        for n, w in layout:
            f.write((n + "\n") * w)
    return path


def summary(rows):
    def med(i):
        xs = [r[i] for r in rows]
        return statistics.median(xs), min(xs), max(xs)
    return med(0), med(1), med(2)


def fmt(m):
    return f"{m[0]:.2f} ({m[1]:.2f}-{m[2]:.2f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", help="also write the rows, machine, commit and date here")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root (slurmd, cgroups)")
    d = tempfile.mkdtemp(prefix="runjob-bench-slurm-")
    os.chmod(d, 0o755)
    env = cluster_up(d)
    env["BENCH_DIR"] = f"{d}/marks"
    try:
        sh(RUNJOB, "--version", env=env)
        with open(f"{d}/worker.py", "w") as f:
            f.write(WORKER)
        os.makedirs(f"{d}/work", exist_ok=True)
        shutil.copy(f"{d}/worker.py", f"{d}/work/worker.py")
        three = [(n, 1) for n in NODES]
        uneven = [("b1", 2), ("b2", 1)]
        cases = [
            ("launch 3x1", job_file(d, "l3", three, ["'true'"]), ["srun", "-N3", "-n3", "-w", ",".join(NODES), "true"], None, (0, 0)),
            ("launch 2+1", job_file(d, "l21", uneven, ["'true'"]),
             ["srun", "-m", "arbitrary", "-n3", "--cpu-bind=none", "true"], hostfile(d, uneven), (0, 0)),
            ("fail-fast 2+1", job_file(d, "ff", uneven, ["/usr/bin/python3", "worker.py"], f"failure: {{grace_period_s: 5}}\nfiles: [{d}/worker.py]\n"),
             ["srun", "-m", "arbitrary", "-n3", "--cpu-bind=none", "--kill-on-bad-exit=1", f"--chdir={d}/work", "/usr/bin/python3", "worker.py"],
             hostfile(d, uneven), (1, None)),
            ("submit 3x1", ["sh", "-c", 'r=$("$0" submit "$1") && exec "$0" logs -f "$r" >/dev/null', RUNJOB, job_file(d, "s3", three, ["'true'"])],
             ["sbatch", "--wait", "--quiet", "-N3", "-n3", "-w", ",".join(NODES), f"--output={d}/sbatch-%j.out", "--wrap", "srun true"], None,
             (0, 0)),
            ("submit --wait", ["sh", "-c", 'exec "$0" submit --wait "$1" >/dev/null', RUNJOB, job_file(d, "sw", three, ["'true'"])],
             ["sbatch", "--wait", "--quiet", "-N3", "-n3", "-w", ",".join(NODES), f"--output={d}/sbatch-%j.out", "--wrap", "srun true"], None,
             (0, 0)),
        ]
        timed([RUNJOB, cases[0][1]], env, d)  # the first contact: agent jar into the node's cache
        print(f"bench/slurm.py  {time.strftime('%Y-%m-%d')}  {socket.gethostname()}  {os.cpu_count()} cores  runs={args.runs}")
        print(f"{'case':<15} {'tool':<7} {'wall s':<20} {'client CPU-s':<20} {'cluster CPU-s':<20}")
        rows = []
        for name, job, peer, hosts, (want_runjob, want_peer) in cases:
            results = {"runjob": [], "srun": []}
            for _ in range(args.runs):
                for tool in ("runjob", "srun"):
                    shutil.rmtree(f"{d}/marks", ignore_errors=True)
                    os.makedirs(f"{d}/marks")
                    e = dict(env)
                    if tool == "srun" and hosts:
                        e["SLURM_HOSTFILE"] = hosts
                    runjob = job if isinstance(job, list) else [RUNJOB, job]
                    code, wall, client, cluster, out = timed(runjob if tool == "runjob" else peer, e, d)
                    want = want_runjob if tool == "runjob" else want_peer
                    if (want is not None and code != want) or (want is None and code == 0):
                        sys.exit(f"{name}: {tool} exited {code} (wanted {want if want is not None else 'non-zero'}):\n{out}")
                    if name.startswith("fail") and not os.path.exists(f"{d}/marks/failed-at"):
                        sys.exit(f"{name}: {tool} exited {code}, but rank 1 never failed (no mark):\n{out[-3000:]}")
                    if name.startswith("fail"):
                        with open(f"{d}/marks/failed-at") as f:
                            failed = float(f.read())
                        wall = time.time() - failed
                    results[tool].append((wall, client, cluster))
            ms = {t: summary(r) for t, r in results.items()}
            for tool in ("runjob", "srun"):
                w, c, n = ms[tool]
                print(f"{name:<15} {tool:<7} {fmt(w):<20} {fmt(c):<20} {fmt(n):<20}")
                rows.append({"case": name, "tool": tool, "wall": fmt(w), "client_cpu": fmt(c), "cluster_cpu": fmt(n)})
            print(f"{'':<15} {'ratio':<7} {ms['runjob'][0][0] / ms['srun'][0][0]:<20.2f} "
                  f"{ms['runjob'][1][0] / max(ms['srun'][1][0], 0.001):<20.2f} {ms['runjob'][2][0] / max(ms['srun'][2][0], 0.001):<20.2f}")
        write_json(args.json, "slurm", args.runs, rows)
    finally:
        cluster_down(d, env)
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
