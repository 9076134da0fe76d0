#!/usr/bin/env python3
"""Launch benchmark: runjob against pdsh, interleaved in pairs, on a lean and a heavy-rc testbed.

For N = 1, 4, 16 hosts (network namespaces with their own sshd, as the test suite builds), each
round runs `runjob JOB` (a trivial job: `true`, one worker per node) and `pdsh -w HOSTS true`
one after the other, R rounds, and reports per tool the median and min-max of:
  wall         seconds from start to exit (every exit code is checked: a crashing peer is not fast)
  client CPU   CPU-seconds of the launcher and its children on this machine (wait4 rusage)
  node CPU     CPU-seconds spent on the nodes: every sshd's reaped children (cutime + cstime of the
               listening sshd: the per-connection sshd, the login shell, the agent, the workers)
  cmds/node    remote commands per node and run (each login shell counts one, via BASH_ENV)
  JVMs/node    JVMs per node and run (a counting `java` on the nodes' PATH)
Layouts: "lean" (the login shell's rc does nothing) and "heavy" (an rc that burns ~0.15 CPU-s,
like `conda init` or `pyenv init` on GPU servers). The first runjob contact (agent jar sent to
the nodes' cache) is reported apart. Needs root, iproute2, openssh-server, pdsh, a JDK.
A launch that exits non-zero stops the bench, unless --keep-going: then it is counted (the
"passed" column, and its error is printed) and left out of the medians.
Usage: sudo bench/launch.py [--sizes 1,4,16] [--runs 5] [--layouts lean,heavy] [--keep-going] [--json OUT]
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time

import ssh as bed
from common import spread, write_json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNJOB = os.path.join(ROOT, "bin", "runjob")
HEAVY_RC = "i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done\n"


def java_home():
    real = os.path.realpath(shutil.which("java"))
    return os.path.dirname(os.path.dirname(real))


def node_tools(tmp):
    """A PATH directory whose `java` logs each start (NODE and first argument) and runs the real one."""
    jdk = f"{tmp}/jdk"
    os.makedirs(f"{jdk}/bin", exist_ok=True)
    shutil.copy(os.path.join(java_home(), "release"), f"{jdk}/release")
    with open(f"{jdk}/bin/java", "w") as f:
        f.write(f"#!/bin/sh\necho \"$RJB_NODE\" >> {tmp}/jvms.log\nexec {java_home()}/bin/java \"$@\"\n")
    os.chmod(f"{jdk}/bin/java", 0o755)
    return f"{jdk}/bin"


def rc(tmp, heavy):
    path = f"{tmp}/rc-{'heavy' if heavy else 'lean'}.sh"
    with open(path, "w") as f:
        f.write(f"echo \"$RJB_NODE\" >> {tmp}/commands.log\n" + (HEAVY_RC if heavy else ""))
    return path


def lines(path):
    try:
        with open(path) as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def measure(cmd, env, procs, tmp, failures=None):
    """(wall, client CPU, node CPU, commands, JVMs) of one run. A non-zero exit stops the bench, or with
    FAILURES (a list) is appended there as (exit code, stderr's end) and gives None."""
    c0, j0, n0 = lines(f"{tmp}/commands.log"), lines(f"{tmp}/jvms.log"), bed.sshd_cpu(procs)
    start = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        tail = err.decode(errors='replace')[-2000:]
        if failures is None:
            raise SystemExit(f"failed ({code}): {' '.join(cmd)}\n{tail}")
        failures.append((code, tail))
        print(f"failed ({code}): {' '.join(cmd[:1] + cmd[-1:])}\n{tail}", flush=True)
        time.sleep(0.3)
        return None
    time.sleep(0.3)  # let the sshds reap their session children before reading their CPU
    return (wall, usage.ru_utime + usage.ru_stime, bed.sshd_cpu(procs) - n0,
            lines(f"{tmp}/commands.log") - c0, lines(f"{tmp}/jvms.log") - j0)


def layout(heavy, sizes, runs, rows, keep_going):
    tmp = tempfile.mkdtemp(prefix="runjob-launchbench-")
    n = max(sizes)
    bed.teardown(n)
    try:
        tools = node_tools(tmp)
        setenv = f"BASH_ENV={rc(tmp, heavy)} PATH={tools}:/usr/local/bin:/usr/bin:/bin XDG_CACHE_HOME={tmp}/cache"
        hosts, procs = bed.testbed(n, tmp, setenv)
        ssh_opts = f"-i {tmp}/id -o UserKnownHostsFile={tmp}/known_hosts -o StrictHostKeyChecking=yes -o BatchMode=yes"
        env = dict(os.environ, PDSH_RCMD_TYPE="ssh", PDSH_SSH_ARGS_APPEND=ssh_opts)
        name = "heavy rc" if heavy else "lean"
        for size in sizes:
            job = bed.job(tmp, f"true{size}", hosts[:size], ["true"])
            failures = {"runjob": [], "pdsh": []} if keep_going else {"runjob": None, "pdsh": None}
            first = measure([RUNJOB, job], env, procs, tmp, failures["runjob"])
            if first:
                rows.append(dict(layout=name, n=size, tool="runjob first contact (jar sent)", passed="1 of 1",
                                 wall=f"{first[0]:.2f}", client_cpu=f"{first[1]:.2f}", node_cpu=f"{first[2]:.2f}",
                                 cmds_per_node=f"{first[3] / size:.1f}", jvms_per_node=f"{first[4] / size:.1f}"))
            results = {"runjob": [], "pdsh": []}
            for _ in range(runs):
                for tool, cmd in (("runjob", [RUNJOB, job]), ("pdsh", ["pdsh", "-w", ",".join(hosts[:size]), "true"])):
                    r = measure(cmd, env, procs, tmp, failures[tool])
                    if r:
                        results[tool].append(r)
            for tool, rs in results.items():
                row = dict(layout=name, n=size, tool=tool, passed=f"{len(rs)} of {runs}")
                if rs:
                    row.update(wall=spread([r[0] for r in rs]), client_cpu=spread([r[1] for r in rs]), node_cpu=spread([r[2] for r in rs]),
                               cmds_per_node=f"{statistics.median(r[3] for r in rs) / size:.1f}",
                               jvms_per_node=f"{statistics.median(r[4] for r in rs) / size:.1f}")
                rows.append(row)
            if results["runjob"] and results["pdsh"]:
                rj = [statistics.median(r[i] for r in results["runjob"]) for i in range(3)]
                pd = [statistics.median(r[i] for r in results["pdsh"]) for i in range(3)]
                rows.append(dict(layout=name, n=size, tool="ratio runjob/pdsh", wall=f"{rj[0] / pd[0]:.1f}x",
                                 client_cpu=f"{rj[1] / max(pd[1], 1e-3):.1f}x", node_cpu=f"{rj[2] / max(pd[2], 1e-3):.1f}x"))
    finally:
        bed.teardown(n)
        shutil.rmtree(tmp, ignore_errors=True)


COLUMNS = (("layout", "layout"), ("n", "N"), ("tool", "tool"), ("passed", "passed"), ("wall", "wall s"),
           ("client_cpu", "client CPU-s"), ("node_cpu", "node CPU-s (all nodes)"), ("cmds_per_node", "cmds/node"),
           ("jvms_per_node", "JVMs/node"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1,4,16")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--layouts", default="lean,heavy")
    ap.add_argument("--keep-going", action="store_true", help="count failed launches instead of stopping")
    ap.add_argument("--json", help="also write the rows and the machine, commit and date here")
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench/launch.py needs root (network namespaces)")
    subprocess.run([RUNJOB, "--version"], check=True, stdout=subprocess.DEVNULL)
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    for heavy in [layout_name == "heavy" for layout_name in args.layouts.split(",")]:
        layout(heavy, sizes, args.runs, rows, args.keep_going)
    table = [tuple(str(r.get(k, "")) for k, _ in COLUMNS) for r in rows]
    head = tuple(h for _, h in COLUMNS)
    widths = [max(len(head[i]), *(len(r[i]) for r in table)) for i in range(len(head))]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
    print("  ".join("-" * w for w in widths))
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    print(f"\nmedian (min-max) of {args.runs} interleaved rounds; {os.cpu_count()} CPUs; {time.strftime('%Y-%m-%d')}")
    write_json(args.json, "launch", args.runs, rows, columns=dict(COLUMNS))


if __name__ == "__main__":
    main()
