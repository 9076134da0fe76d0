#!/usr/bin/env python3
"""Recovery from a lost node on a throw-away sshd testbed: runjob with a spare against pdsh.

Builds 4 sshd hosts as network namespaces (bench/ssh.py's testbed). Each round runs a trainer
(src/test/resources/workers/steps.py: STEPS steps of STEP_S seconds, each saved to a directory the
nodes share, resumed from there) on 3 nodes, and cuts node 2's link once its rank saved step 4:
  runjob  nodes n1-n3, spare n4, failure.max_restarts 2 (heartbeat_timeout_s as given): timed from
          the cut to runjob's "lost" line, to its "stands in" line and to the first line of the
          next attempt on the spare; with the recovery phases and goodput from summary.json
  pdsh    `pdsh -S -w n1,n2,n3 python3 steps.py` with ssh keepalives (ServerAliveInterval=1, count 4),
          as a hand-made launch does it: timed from the cut to its exit
The two alternate in each round; every exit code is recorded (runjob's must be 0, pdsh's is not),
with the ranks that finished every step, the launcher's CPU-seconds (wait4) and the nodes'
(every sshd's reaped descendants). The link comes back after each run.
With --chaos SECONDS: one runjob run on 4 nodes + 2 spares (wait_for_node_s 30, 50 restarts) while
a random node's link is cut every 20-30 s for SECONDS and brought back 8 s later; reports its
attempts, stand-ins and goodput.
Needs root, iproute2, openssh-server, pdsh. Removes the testbed when done.
Usage: sudo bench/recovery.py [--runs 3] [--heartbeat 4] [--steps 60] [--chaos 300] [--json OUT]
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import ssh as bed
from common import spread, write_json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNJOB = os.path.join(ROOT, "bin", "runjob")
WORKERS = os.path.join(ROOT, "src", "test", "resources", "workers")
STEP_S = 0.25


def link(i, up):
    bed.sh("ip", "link", "set", f"rjbv{i}", "up" if up else "down")


def saved(ckpt, rank):
    try:
        with open(os.path.join(ckpt, f"rank-{rank}")) as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


class Watched:
    """A process whose stdout and stderr lines are stamped (monotonic) as they arrive."""

    def __init__(self, cmd, env=None):
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.lines = []
        self.readers = [threading.Thread(target=self.read, args=(s, name), daemon=True)
                        for s, name in ((self.p.stdout, "out"), (self.p.stderr, "err"))]
        for r in self.readers:
            r.start()

    def read(self, stream, name):
        for line in stream:
            self.lines.append((time.monotonic(), name, line.rstrip("\n")))

    def first(self, pred, after=0.0):
        """When the first line matching PRED arrived (after time AFTER), or None."""
        return next((t for t, _, line in list(self.lines) if t >= after and pred(line)), None)

    def wait(self):
        """Exit code, CPU-seconds (user+sys) of the process and its reaped children, wall seconds."""
        _, status, ru = os.wait4(self.p.pid, 0)
        self.p.returncode = os.waitstatus_to_exitcode(status)
        for r in self.readers:
            r.join(10)
        return self.p.returncode, ru.ru_utime + ru.ru_stime, time.monotonic() - self.t0


def job(tmp, name, hosts, spares, ckpt, steps, failure):
    lines = [f"name: {name}", "nodes:"]
    for i, h in enumerate(hosts):
        lines.append(f"  - {{name: n{i + 1}, host: {h}, user: root, workers: 1, workdir: {tmp}/work/{name}/n{i + 1}}}")
    lines.append("spares:")
    for i, h in enumerate(spares):
        n = len(hosts) + i + 1
        lines.append(f"  - {{name: n{n}, host: {h}, user: root, workers: 1, workdir: {tmp}/work/{name}/n{n}}}")
    lines += ["entrypoint: {command: [python3, steps.py]}",
              f"files: [{WORKERS}/steps.py, {WORKERS}/common.py]",
              f"ssh: {{identity: {tmp}/id, known_hosts: {tmp}/known_hosts, connect_timeout_s: 3}}",
              f"logs: {{dir: {tmp}/runs}}", f"failure: {failure}",
              f"env: {{CKPT: {ckpt}, STEPS: '{steps}', STEP_S: '{STEP_S}', PIDDIR: {tmp}}}"]
    path = f"{tmp}/{name}.yaml"
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def fresh(ckpt):
    shutil.rmtree(ckpt, ignore_errors=True)
    os.makedirs(ckpt)


def cut_when_saved(ckpt, rank, step, watched, deadline_s=120):
    """Cuts node RANK+1's link once RANK saved STEP; returns the time of the cut."""
    deadline = time.monotonic() + deadline_s
    while saved(ckpt, rank) < step:
        if time.monotonic() > deadline or watched.p.poll() is not None:
            raise SystemExit(f"rank {rank} never saved step {step}: " + "\n".join(l for _, _, l in watched.lines[-20:]))
        time.sleep(0.05)
    link(rank + 1, False)
    return time.monotonic()


def summary(tmp, name):
    runs = os.path.join(tmp, "runs", name)
    newest = sorted(os.listdir(runs))[-1]
    with open(os.path.join(runs, newest, "summary.json")) as f:
        return json.load(f)


def runjob_round(tmp, hosts, steps, heartbeat, procs):
    ckpt = f"{tmp}/ckpt-runjob"
    fresh(ckpt)
    path = job(tmp, "recovery", hosts[:3], hosts[3:4], ckpt, steps,
               f"{{max_restarts: 2, grace_period_s: 1, heartbeat_timeout_s: {heartbeat}}}")
    nodes0 = bed.sshd_cpu(procs)
    # a quarantine of its own each run: the node an earlier round lost is not avoided by the next
    w = Watched([RUNJOB, path], env=dict(os.environ, XDG_STATE_HOME=tempfile.mkdtemp(dir=tmp, prefix="state-")))
    cut = cut_when_saved(ckpt, 1, 4, w)
    code, cpu, wall = w.wait()
    link(2, True)
    if code != 0:
        raise SystemExit(f"runjob exited {code}:\n" + "\n".join(l for _, _, l in w.lines[-30:]))
    s = summary(tmp, "recovery")
    done = sum(1 for _, _, l in w.lines if " done at step " in l and l.endswith(f" {steps}"))
    lost = w.first(lambda l: "runjob: node n2" in l and " lost" in l, cut)
    stand = w.first(lambda l: "stands in for node n2" in l, cut)
    first = w.first(lambda l: l.startswith("[n4/1#1] "), cut)
    if not s.get("recovery"):
        raise SystemExit("runjob made no restart after the cut:\n" + "\n".join(l for _, _, l in w.lines[-30:]))
    rec = s["recovery"][0]
    return {"tool": "runjob", "exit": code, "wall_s": wall, "cpu_s": cpu, "nodes_cpu_s": bed.sshd_cpu(procs) - nodes0,
            "ranks_done": done, "to_lost_s": lost - cut, "to_stand_in_s": stand - cut, "to_first_output_s": first - cut,
            "stop_s": rec["stop_s"], "replace_s": rec["replace_s"], "relaunch_s": rec["relaunch_s"], "goodput": s["goodput"]}


def pdsh_round(tmp, hosts, steps, procs):
    ckpt = f"{tmp}/ckpt-pdsh"
    fresh(ckpt)
    env = dict(os.environ, PDSH_RCMD_TYPE="ssh", PDSH_SSH_ARGS_APPEND=f"-i {tmp}/id -o UserKnownHostsFile={tmp}/known_hosts"
               " -o ServerAliveInterval=1 -o ServerAliveCountMax=4 -o ConnectTimeout=3")
    remote = (f"cd {WORKERS} && R=$(( ${{RJB_NODE#n}} - 1 )) && RANK=$R NODE_RANK=$R WORLD_SIZE=3 RUNJOB_ATTEMPT=0"
              f" RUNJOB_NODE=$RJB_NODE MASTER_ADDR={hosts[0]} CKPT={ckpt} STEPS={steps} STEP_S={STEP_S} PIDDIR={tmp}"
              " python3 steps.py")
    nodes0 = bed.sshd_cpu(procs)
    w = Watched(["pdsh", "-S", "-l", "root", "-w", ",".join(hosts[:3]), remote], env=env)
    cut = cut_when_saved(ckpt, 1, 4, w)
    code, cpu, wall = w.wait()
    link(2, True)
    done = sum(1 for _, _, l in w.lines if " done at step " in l and l.endswith(f" {steps}"))
    ended = w.lines[-1][0] if w.lines else time.monotonic()
    return {"tool": "pdsh", "exit": code, "wall_s": wall, "cpu_s": cpu, "nodes_cpu_s": bed.sshd_cpu(procs) - nodes0,
            "ranks_done": done, "to_exit_s": time.monotonic() - cut if code else None, "last_line_after_cut_s": ended - cut}


def chaos(tmp, hosts, seconds, procs):
    ckpt = f"{tmp}/ckpt-chaos"
    fresh(ckpt)
    steps = int((seconds + 30) / STEP_S)
    path = job(tmp, "chaos", hosts[:4], hosts[4:6], ckpt, steps,
               "{max_restarts: 50, grace_period_s: 1, heartbeat_timeout_s: 4, wait_for_node_s: 30, crash_loop_s: 0}")
    # a quarantine of its own each run: the node an earlier round lost is not avoided by the next
    w = Watched([RUNJOB, path], env=dict(os.environ, XDG_STATE_HOME=tempfile.mkdtemp(dir=tmp, prefix="state-")))
    start = time.monotonic()
    cuts = 0
    rng = random.Random(7)
    while time.monotonic() - start < seconds and w.p.poll() is None:
        time.sleep(rng.uniform(20, 30))
        if w.p.poll() is not None:
            break
        i = rng.randint(1, 6)
        link(i, False)
        cuts += 1
        time.sleep(8)
        link(i, True)
    code, cpu, wall = w.wait()
    s = summary(tmp, "chaos")
    return {"tool": "runjob chaos", "exit": code, "wall_s": wall, "cpu_s": cpu, "cuts": cuts, "attempts": len(s["attempts"]),
            "stand_ins": len(s.get("stand_ins", [])), "goodput": s["goodput"], "result": s["result"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--heartbeat", type=int, default=4, help="failure.heartbeat_timeout_s of the runjob job")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--chaos", type=int, default=0, help="seconds of the chaos run (0: none)")
    ap.add_argument("--json")
    a = ap.parse_args()
    if os.geteuid() != 0 or not shutil.which("pdsh"):
        sys.exit("this bench needs root and pdsh (Debian: pdsh)")
    tmp = tempfile.mkdtemp(prefix="bench-recovery-")
    n = 6 if a.chaos else 4
    bed.teardown(n)
    try:
        hosts, procs = bed.testbed(n, tmp)
        subprocess.run([RUNJOB, "--version"], check=True, stdout=subprocess.DEVNULL)
        rows = []
        for r in range(a.runs):
            rows.append(runjob_round(tmp, hosts, a.steps, a.heartbeat, procs))
            rows.append(pdsh_round(tmp, hosts, a.steps, procs))
            print(f"round {r + 1}: " + "; ".join(json.dumps({k: (round(v, 2) if isinstance(v, float) else v) for k, v in x.items()})
                                                   for x in rows[-2:]), flush=True)
        rj = [x for x in rows if x["tool"] == "runjob"]
        pd = [x for x in rows if x["tool"] == "pdsh"]
        print(f"\n3 nodes + 1 spare, node 2's link cut at step 4 of {a.steps} ({STEP_S} s each), heartbeat_timeout_s {a.heartbeat},"
              f" {a.runs} rounds: median (min-max)")
        print(f"runjob: exit {sorted({x['exit'] for x in rj})}, ranks done {sorted({x['ranks_done'] for x in rj})} of 3,"
              f" wall {spread([x['wall_s'] for x in rj])} s, launcher CPU {spread([x['cpu_s'] for x in rj])} s,"
              f" nodes CPU {spread([x['nodes_cpu_s'] for x in rj])} s")
        for k in ("to_lost_s", "to_stand_in_s", "to_first_output_s", "stop_s", "replace_s", "relaunch_s", "goodput"):
            print(f"  {k:18} {spread([x[k] for x in rj])}")
        print(f"pdsh:   exit {sorted({x['exit'] for x in pd})}, ranks done {sorted({x['ranks_done'] for x in pd})} of 3,"
              f" wall {spread([x['wall_s'] for x in pd])} s, launcher CPU {spread([x['cpu_s'] for x in pd])} s,"
              f" nodes CPU {spread([x['nodes_cpu_s'] for x in pd])} s")
        if a.chaos:
            c = chaos(tmp, hosts, a.chaos, procs)
            rows.append(c)
            print(f"chaos {a.chaos} s on 4 nodes + 2 spares: {json.dumps(c)}")
        write_json(a.json, "recovery", a.runs, rows, heartbeat_s=a.heartbeat, steps=a.steps)
    finally:
        for i in range(1, n + 1):
            subprocess.run(["ip", "link", "set", f"rjbv{i}", "up"], stderr=subprocess.DEVNULL)
        bed.teardown(n)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
