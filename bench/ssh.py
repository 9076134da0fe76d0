#!/usr/bin/env python3
"""SSH benchmark on a throw-away testbed: distribution and log throughput, runjob against pdcp and pdsh.

Builds N hosts as network namespaces on a bridge, each with its own sshd (as the test suite
does); then R rounds, each running runjob and its peer one after the other (interleaved), every
exit code checked (launch against pdsh is bench/launch.py's):
  ship   a 100 MiB file to N nodes, into a fresh directory each round: runjob's run of a trivial job
         that ships it (the first run of a workdir: sent), with relay (the default, `relay: auto`) and
         without (`relay: never`), beside `pdcp -w HOSTS`; with --uplink RATE, this machine's link to
         the nodes is limited to RATE (a tbf qdisc on the bridge's host side: what this machine sends
         to the nodes; node-to-node traffic is not limited), as a launch host's uplink is on a cluster
  logs   LINES lines from a worker on each of 4 nodes (fewer with --hosts below 4) to this machine's console (a file): runjob's
         run, beside `pdsh -w HOSTS 'python3 lines.py'`; lines/s over the wall time, every line
         counted (none lost), and the peak RSS of the launcher. Twice, with the same worker
         behaviour on both sides: "live" (PYTHONUNBUFFERED=1, runjob's and torchrun's default: one
         write per line) and "buffered" (the job's env empties it; 8 KiB writes)
Reports median (min-max) per tool of wall time, the launcher's CPU-seconds (wait4 rusage) and the
nodes' CPU-seconds (what every sshd's reaped descendants used), and the runjob/peer ratio of the
medians.
Needs root, iproute2, openssh-server, pdsh (Debian: pdsh). Removes the testbed when done.
Usage: sudo bench/ssh.py [--hosts 16] [--runs 3] [--lines 1000000] [--uplink 1gbit] [--only ship|logs] [--json OUT]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from common import PeakRss, spread, write_json


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNJOB = os.path.join(ROOT, "bin", "runjob")
WORKERS = os.path.join(ROOT, "src", "test", "resources", "workers")
SUBNET = "10.204.0"
BRIDGE = "rjbbr0"


def sh(*cmd, check=True):
    return subprocess.run(cmd, check=check, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout


def sshd_cpu(procs):
    """CPU-seconds of every sshd's reaped descendants so far (what the nodes ran for the launcher)."""
    total = 0
    for p in procs:
        with open(f"/proc/{p.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[13]) + int(fields[14])  # cutime, cstime
    return total / os.sysconf("SC_CLK_TCK")


def teardown(n):
    for i in range(1, n + 1):
        subprocess.run(["ip", "netns", "pids", f"rjb{i}"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        pids = sh("ip", "netns", "pids", f"rjb{i}", check=False).split()
        for pid in pids:
            subprocess.run(["kill", "-9", pid], stderr=subprocess.DEVNULL)
        subprocess.run(["ip", "netns", "del", f"rjb{i}"], stderr=subprocess.DEVNULL)
        subprocess.run(["ip", "link", "del", f"rjbv{i}"], stderr=subprocess.DEVNULL)
    subprocess.run(["ip", "link", "del", BRIDGE], stderr=subprocess.DEVNULL)


def testbed(n, tmp, setenv=""):
    """N sshd hosts; SETENV is added to each sshd's SetEnv line (NODE=nI is always set)."""
    os.makedirs("/run/sshd", exist_ok=True)
    sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{tmp}/id")
    shutil.copy(f"{tmp}/id.pub", f"{tmp}/authorized_keys")
    sh("ip", "link", "add", BRIDGE, "type", "bridge")
    sh("ip", "addr", "add", f"{SUBNET}.1/24", "dev", BRIDGE)
    sh("ip", "link", "set", BRIDGE, "up")
    hosts, known, procs = [], [], []
    for i in range(1, n + 1):
        ns, addr = f"rjb{i}", f"{SUBNET}.{10 + i}"
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", f"rjbv{i}", "type", "veth", "peer", "name", "eth0", "netns", ns)
        sh("ip", "link", "set", f"rjbv{i}", "master", BRIDGE, "up")
        sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", "eth0")
        sh("ip", "-n", ns, "link", "set", "eth0", "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "-n", ns, "route", "add", "default", "via", f"{SUBNET}.1")
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{tmp}/host{i}")
        with open(f"{tmp}/sshd{i}.conf", "w") as f:
            f.write("\n".join([f"ListenAddress {addr}", f"HostKey {tmp}/host{i}", f"PidFile {tmp}/sshd{i}.pid",
                               f"AuthorizedKeysFile {tmp}/authorized_keys", "PermitRootLogin prohibit-password",
                               "PasswordAuthentication no", "UsePAM no", "StrictModes no", "MaxStartups 100",
                               f"SetEnv SHLVL=1 RJB_NODE=n{i} {setenv}".rstrip(), "Subsystem sftp internal-sftp", "LogLevel ERROR", ""]))
        procs.append(subprocess.Popen(["ip", "netns", "exec", ns, "/usr/sbin/sshd", "-D", "-e", "-f", f"{tmp}/sshd{i}.conf"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        pub = open(f"{tmp}/host{i}.pub").read().split()
        known.append(f"{addr} {pub[0]} {pub[1]}")
        hosts.append(addr)
    with open(f"{tmp}/known_hosts", "w") as f:
        f.write("\n".join(known) + "\n")
    import socket
    for addr in hosts:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection((addr, 22), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
    return hosts, procs


def job(tmp, name, hosts, command, files=(), relay="auto"):
    lines = [f"name: {name}", "nodes:"]
    for i, h in enumerate(hosts):
        lines.append(f"  - {{name: n{i + 1}, host: {h}, user: root, workers: 1, workdir: {tmp}/work/{name}/n{i + 1}}}")
    lines += ["rendezvous: {port: auto}", f"entrypoint: {{command: [{', '.join(command)}]}}",
              f"files: [{', '.join(files)}]", f"ssh: {{identity: {tmp}/id, known_hosts: {tmp}/known_hosts}}",
              f"logs: {{dir: {tmp}/runs}}", f"relay: {relay}"]
    path = f"{tmp}/{name}.yaml"
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def uplink_bytes():
    """Bytes this machine has sent to the nodes so far (the bridge's host side)."""
    with open(f"/sys/class/net/{BRIDGE}/statistics/tx_bytes") as f:
        return int(f.read())


def timed(cmd, env=None, stdout=subprocess.DEVNULL, want=0, procs=()):
    """(wall s, peak RSS MiB of the largest process, launcher CPU s, node CPU s); exits when the exit code is not WANT."""
    n0 = sshd_cpu(procs)
    start = time.monotonic()
    p = subprocess.Popen(RSS.wrap(cmd), env=env, stdout=stdout, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    if code != want:
        raise SystemExit(f"failed ({code}): {' '.join(cmd)}\n{err.decode(errors='replace')[-3000:]}")
    time.sleep(0.3)  # let the sshds reap their session children before reading their CPU
    return wall, RSS.last(), usage.ru_utime + usage.ru_stime, sshd_cpu(procs) - n0


fmt = spread
RSS = None  # PeakRss, made in main


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=16)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--uplink", help="limit this machine's link to the nodes, a tc rate (1gbit)")
    ap.add_argument("--only", choices=["ship", "logs"])
    ap.add_argument("--json", help="also write the rows, machine, commit and date here")
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench/ssh.py needs root (network namespaces)")
    global RSS
    RSS = PeakRss()
    subprocess.run([RUNJOB, "--version"], check=True, stdout=subprocess.DEVNULL)
    tmp = tempfile.mkdtemp(prefix="runjob-sshbench-")
    teardown(args.hosts)
    ship_tools = ("runjob", "runjob-norelay", "pdcp")
    ship = {t: {"wall": [], "cpu": [], "node": [], "uplink": []} for t in ship_tools}
    logs = {(m, t): {"rate": [], "rss": [], "cpu": [], "node": []} for m in ("live", "buffered") for t in ("runjob", "pdsh")}
    try:
        hosts, procs = testbed(args.hosts, tmp)
        if args.uplink:
            sh("tc", "qdisc", "add", "dev", BRIDGE, "root", "tbf", "rate", args.uplink, "burst", "1mbit", "latency", "100ms")
        ssh_opts = f"-i {tmp}/id -o UserKnownHostsFile={tmp}/known_hosts -o StrictHostKeyChecking=yes -o BatchMode=yes"
        env = dict(os.environ, PDSH_RCMD_TYPE="ssh", PDSH_SSH_ARGS_APPEND=ssh_opts)
        big = f"{tmp}/big.bin"
        with open(big, "wb") as f:
            f.write(os.urandom(100 * 1024 * 1024))
        timed([RUNJOB, job(tmp, "warm", hosts, ["true"])])  # the agent jar into the nodes' cache, once
        four = hosts[:4]
        shutil.copy(f"{WORKERS}/lines.py", f"{tmp}/lines.py")
        lj = {}
        for mode, unbuffered in (("live", "1"), ("buffered", "")):
            lj[mode] = job(tmp, f"logs-{mode}", four, ["python3", "lines.py"], [f"{WORKERS}/lines.py"])
            with open(lj[mode], "a") as f:
                f.write(f"env: {{LINES: '{args.lines}', PYTHONUNBUFFERED: '{unbuffered}'}}\n")
        for r in range(args.runs):
            if args.only != "logs":
                for tool in ship_tools:
                    if tool == "pdcp":
                        os.makedirs(f"{tmp}/pdcp{r}", exist_ok=True)
                        cmd = ["pdcp", "-w", ",".join(hosts), big, f"{tmp}/pdcp{r}/big.bin"]
                    else:
                        cmd = [RUNJOB, job(tmp, f"ship{r}-{tool}", hosts, ["true"], [big],
                                           relay="never" if tool == "runjob-norelay" else "auto")]
                    b0 = uplink_bytes()
                    wall, _, cpu, node = timed(cmd, env=env, procs=procs)
                    ship[tool]["uplink"].append((uplink_bytes() - b0) / 2**20)
                    ship[tool]["wall"].append(wall)
                    ship[tool]["cpu"].append(cpu)
                    ship[tool]["node"].append(node)
            for mode, tool in ((m, t) for m in ("live", "buffered") for t in ("runjob", "pdsh")):
                if args.only != "ship":
                    out_path = f"{tmp}/console-{tool}.out"
                    unbuffered = "PYTHONUNBUFFERED=1 " if mode == "live" else ""
                    cmd = [RUNJOB, lj[mode]] if tool == "runjob" else ["pdsh", "-w", ",".join(four),
                                                                       f"{unbuffered}RANK=0 LINES={args.lines} python3 {tmp}/lines.py"]
                    with open(out_path, "wb") as out:
                        wall, peak, cpu, node = timed(cmd, env=env, stdout=out, procs=procs)
                    with open(out_path, "rb") as f:
                        got = sum(1 for line in f if b" line " in line)
                    if got != len(four) * args.lines:
                        raise SystemExit(f"{tool}: {got} of {len(four) * args.lines} lines reached the console")
                    logs[mode, tool]["rate"].append(len(four) * args.lines / wall / 1e6)
                    logs[mode, tool]["rss"].append(peak)
                    logs[mode, tool]["cpu"].append(cpu)
                    logs[mode, tool]["node"].append(node)
    finally:
        teardown(args.hosts)
        shutil.rmtree(tmp, ignore_errors=True)
    n = len(hosts)
    print(f"bench/ssh.py  {time.strftime('%Y-%m-%d')}  {os.cpu_count()} cores  hosts={n}  runs={args.runs}  lines={args.lines}"
          f"  uplink={args.uplink or 'unlimited'}")
    rows = []
    if args.only != "logs":
        print(f"ship 100 MiB to {n} nodes: wall s, launcher CPU-s, node CPU-s, MiB over this machine's link (median (min-max))")
        for tool in ship_tools:
            m = ship[tool]
            ratio = f"{statistics.median(m['wall']) / statistics.median(ship['pdcp']['wall']):.2f}x"
            print(f"  {tool:15} {fmt(m['wall'])}  cpu {fmt(m['cpu'])}  nodes {fmt(m['node'])}  uplink {fmt(m['uplink'])}  "
                  f"ratio to pdcp {ratio}")
            rows.append({"case": "ship", "tool": tool, "wall": fmt(m["wall"]), "cpu": fmt(m["cpu"]), "node_cpu": fmt(m["node"]),
                         "uplink_mib": fmt(m["uplink"]), "ratio": ratio})
    if args.only != "ship":
        print(f"logs {min(n, 4)} nodes x {args.lines} lines (M lines/s, none lost; launcher CPU-s; node CPU-s; launcher peak RSS MiB)")
        for mode in ("live", "buffered"):
            for tool in ("runjob", "pdsh"):
                m = logs[mode, tool]
                print(f"  {mode:8} {tool:7} {fmt(m['rate'])}  cpu {fmt(m['cpu'])}  nodes {fmt(m['node'])}  rss {fmt(m['rss'])}")
                rows.append({"case": f"logs, {mode}", "tool": tool, "m_lines_per_s": fmt(m["rate"]), "cpu": fmt(m["cpu"]),
                             "node_cpu": fmt(m["node"]), "peak_rss_mib": fmt(m["rss"])})
            ratio = statistics.median(logs[mode, 'runjob']['rate']) / statistics.median(logs[mode, 'pdsh']['rate'])
            print(f"  {mode:8} ratio {ratio:.2f}x")
            rows.append({"case": f"logs, {mode}", "tool": "ratio runjob/pdsh", "m_lines_per_s": f"{ratio:.2f}x"})
    write_json(args.json, "ssh", args.runs, rows, hosts=n, lines=args.lines, uplink=args.uplink or "unlimited")


if __name__ == "__main__":
    main()
