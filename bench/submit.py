#!/usr/bin/env python3
"""Submit benchmark: handing a run to the cluster, runjob against the hand-made way, interleaved.

On N hosts (network namespaces with their own sshd, as bench/ssh.py builds them), each round runs,
one after the other:
  runjob submit   `runjob submit JOB` (JOB: `sleep 2`, one worker per node); then, untimed,
                  `runjob logs -f RUN` until the run ends (its exit code must be 0)
  runjob detach   `runjob JOB --detach` (the run's runjob stays on this machine); then the same wait
  pdsh nohup      `pdsh -w HOSTS 'setsid sh -c "sleep 2; touch DONE" </dev/null >/dev/null 2>&1 &'`:
                  what people do by hand to leave work running (no ranks, no supervision, no logs)
and reports per tool the median and min-max of:
  return s      seconds until the command returns (this machine may then go)
  client CPU-s  CPU-seconds of that command and its children on this machine (wait4 rusage)
  machine CPU-s CPU-seconds of the whole machine (/proc/stat) from the start until the work has
                ended: the launcher, every node's sshd, hosts, coordinator, agents and workers (the
                testbed shares one machine; a hosted coordinator is no sshd child, so sshd's own
                accounting would miss it)
Every exit code is checked. Needs root, iproute2, openssh-server, pdsh, a JDK.
Usage: sudo bench/submit.py [--hosts 4] [--runs 5] [--json OUT]
"""
import argparse
import os
import resource
import statistics
import subprocess
import tempfile
import time

import ssh as bed
from common import spread, write_json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNJOB = os.path.join(ROOT, "bin", "runjob")
TICK = os.sysconf("SC_CLK_TCK")


def machine_cpu():
    with open("/proc/stat") as f:
        w = f.readline().split()
    return (int(w[1]) + int(w[2]) + int(w[3]) + int(w[6]) + int(w[7])) / TICK  # user nice system irq softirq


def run(cmd, env):
    """(stdout, return s) of CMD; exits when it fails."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate()
    wall = time.monotonic() - start
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd)}\n{err.decode(errors='replace')[-3000:]}")
    return out.decode(), wall


def child_cpu():
    """CPU-seconds of this script's reaped children so far."""
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def measure(tool, job, hosts, env, tmp, i):
    m0, c0 = machine_cpu(), child_cpu()
    if tool == "pdsh nohup":
        done = f"{tmp}/done-{i}"
        os.makedirs(done, exist_ok=True)
        cmd = ["pdsh", "-w", ",".join(hosts),
               f"setsid sh -c 'sleep 2; touch {done}/$(hostname -I | cut -d\" \" -f1)' </dev/null >/dev/null 2>&1 &"]
        _, wall = run(cmd, env)
        client = child_cpu() - c0
        deadline = time.monotonic() + 60
        while len(os.listdir(done)) < len(hosts):
            if time.monotonic() > deadline:
                raise SystemExit("pdsh nohup: the work did not end")
            time.sleep(0.05)
    else:
        cmd = [RUNJOB, "submit", job] if tool == "runjob submit" else [RUNJOB, job, "--detach"]
        out, wall = run(cmd, env)
        client = child_cpu() - c0
        run_id = out.strip().splitlines()[-1]
        run([RUNJOB, "logs", "-f", run_id], env)  # the run's own exit code: 0
        time.sleep(1)  # the coordinator's JVM exits after the summary is written
    return wall, client, machine_cpu() - m0


fmt = spread


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=4)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", help="also write the rows, machine, commit and date here")
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench/submit.py needs root (network namespaces)")
    subprocess.run([RUNJOB, "--version"], check=True, stdout=subprocess.DEVNULL)
    tmp = tempfile.mkdtemp(prefix="runjob-submitbench-")
    bed.teardown(args.hosts)
    try:
        hosts, _ = bed.testbed(args.hosts, tmp, f"XDG_CACHE_HOME={tmp}/cache")
        ssh_opts = f"-i {tmp}/id -o UserKnownHostsFile={tmp}/known_hosts -o StrictHostKeyChecking=yes -o BatchMode=yes"
        env = dict(os.environ, PDSH_RCMD_TYPE="ssh", PDSH_SSH_ARGS_APPEND=ssh_opts, XDG_STATE_HOME=f"{tmp}/state")
        job = bed.job(tmp, "nap", hosts, ["sleep", "2"])
        measure("runjob submit", job, hosts, env, tmp, -1)  # first contact: the jar goes to the nodes' cache
        tools = ["runjob submit", "runjob detach", "pdsh nohup"]
        results = {t: [] for t in tools}
        for i in range(args.runs):
            for t in tools:
                results[t].append(measure(t, job, hosts, env, tmp, i))
        head = ("tool", "return s", "client CPU-s", "machine CPU-s (whole run)")
        rows = [(t, fmt([r[0] for r in rs]), fmt([r[1] for r in rs]), fmt([r[2] for r in rs])) for t, rs in results.items()]
        sub = [statistics.median(r[k] for r in results["runjob submit"]) for k in range(3)]
        for peer in ("runjob detach", "pdsh nohup"):
            p = [statistics.median(r[k] for r in results[peer]) for k in range(3)]
            rows.append((f"ratio submit/{peer.split()[-1]}", *(f"{a / max(b, 1e-3):.1f}x" for a, b in zip(sub, p))))
        widths = [max(len(head[i]), *(len(r[i]) for r in rows)) for i in range(len(head))]
        print(f"{args.hosts} hosts, a `sleep 2` job, one worker per node")
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
        print("  ".join("-" * w for w in widths))
        for r in rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
        print(f"\nmedian (min-max) of {args.runs} interleaved rounds; {os.cpu_count()} CPUs; {time.strftime('%Y-%m-%d')}")
        write_json(args.json, "submit", args.runs, [dict(zip(("tool", "return", "client_cpu", "machine_cpu"), r)) for r in rows],
                   hosts=args.hosts)
    finally:
        bed.teardown(args.hosts)
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
