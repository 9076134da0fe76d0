#!/usr/bin/env python3
"""SSH benchmark on a throw-away testbed: distribution and log throughput, runjob against pdcp and pdsh.

Builds N hosts as network namespaces on a bridge, each with its own sshd (as the test suite
does); then R rounds, each running runjob and its peer one after the other (interleaved), every
exit code checked (launch against pdsh is bench/launch.py's):
  ship   a 100 MiB file to N nodes, into a fresh directory each round: runjob's run of a trivial job
         that ships it (the first run of a workdir: sent), beside `pdcp -w HOSTS`
  logs   LINES lines from a worker on each of 4 nodes to this machine's console (a file): runjob's
         run, beside `pdsh -w HOSTS 'python3 lines.py'`; lines/s over the wall time, every line
         counted (none lost), and the peak RSS of the launcher
Reports median (min-max) per tool, and the runjob/peer ratio of the medians.
Needs root, iproute2, openssh-server, pdsh (Debian: pdsh). Removes the testbed when done.
Usage: sudo bench/ssh.py [--hosts 16] [--runs 3] [--lines 1000000]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNJOB = os.path.join(ROOT, "bin", "runjob")
WORKERS = os.path.join(ROOT, "src", "test", "resources", "workers")
SUBNET = "10.204.0"
BRIDGE = "rjbbr0"


def sh(*cmd, check=True):
    return subprocess.run(cmd, check=check, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout


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


def job(tmp, name, hosts, command, files=()):
    lines = [f"name: {name}", "nodes:"]
    for i, h in enumerate(hosts):
        lines.append(f"  - {{name: n{i + 1}, host: {h}, user: root, workers: 1, workdir: {tmp}/work/{name}/n{i + 1}}}")
    lines += ["rendezvous: {port: auto}", f"entrypoint: {{command: [{', '.join(command)}]}}",
              f"files: [{', '.join(files)}]", f"ssh: {{identity: {tmp}/id, known_hosts: {tmp}/known_hosts}}",
              f"logs: {{dir: {tmp}/runs}}"]
    path = f"{tmp}/{name}.yaml"
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def timed(cmd, env=None, stdout=subprocess.DEVNULL, want=0):
    """(wall s, peak RSS MiB of the largest process); exits when the exit code is not WANT."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != want:
        raise SystemExit(f"failed ({code}): {' '.join(cmd)}")
    return time.monotonic() - start, usage.ru_maxrss / 1024


def fmt(xs):
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=16)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--lines", type=int, default=1_000_000)
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench/ssh.py needs root (network namespaces)")
    subprocess.run([RUNJOB, "--version"], check=True, stdout=subprocess.DEVNULL)
    tmp = tempfile.mkdtemp(prefix="runjob-sshbench-")
    teardown(args.hosts)
    ship = {"runjob": [], "pdcp": []}
    logs = {"runjob": [], "pdsh": []}
    rss = {"runjob": [], "pdsh": []}
    try:
        hosts, _ = testbed(args.hosts, tmp)
        ssh_opts = f"-i {tmp}/id -o UserKnownHostsFile={tmp}/known_hosts -o StrictHostKeyChecking=yes -o BatchMode=yes"
        env = dict(os.environ, PDSH_RCMD_TYPE="ssh", PDSH_SSH_ARGS_APPEND=ssh_opts)
        big = f"{tmp}/big.bin"
        with open(big, "wb") as f:
            f.write(os.urandom(100 * 1024 * 1024))
        timed([RUNJOB, job(tmp, "warm", hosts, ["true"])])  # the agent jar into the nodes' cache, once
        four = hosts[:4]
        shutil.copy(f"{WORKERS}/lines.py", f"{tmp}/lines.py")
        lj = job(tmp, "logs", four, ["python3", "lines.py"], [f"{WORKERS}/lines.py"])
        with open(lj, "a") as f:
            f.write(f"env: {{LINES: '{args.lines}'}}\n")
        for r in range(args.runs):
            j = job(tmp, f"ship{r}", hosts, ["true"], [big])
            ship["runjob"].append(timed([RUNJOB, j])[0])
            os.makedirs(f"{tmp}/pdcp{r}", exist_ok=True)
            ship["pdcp"].append(timed(["pdcp", "-w", ",".join(hosts), big, f"{tmp}/pdcp{r}/big.bin"], env=env)[0])
            for tool in ("runjob", "pdsh"):
                out_path = f"{tmp}/console-{tool}.out"
                cmd = [RUNJOB, lj] if tool == "runjob" else ["pdsh", "-w", ",".join(four),
                                                             f"RANK=0 LINES={args.lines} python3 {tmp}/lines.py"]
                with open(out_path, "wb") as out:
                    wall, peak = timed(cmd, env=env, stdout=out)
                with open(out_path, "rb") as f:
                    got = sum(1 for line in f if b" line " in line)
                if got != 4 * args.lines:
                    raise SystemExit(f"{tool}: {got} of {4 * args.lines} lines reached the console")
                logs[tool].append(4 * args.lines / wall / 1e6)
                rss[tool].append(peak)
    finally:
        teardown(args.hosts)
        shutil.rmtree(tmp, ignore_errors=True)
    n = len(hosts)
    print(f"bench/ssh.py  {time.strftime('%Y-%m-%d')}  {os.cpu_count()} cores  hosts={n}  runs={args.runs}  lines={args.lines}")
    print(f"ship 100 MiB to {n} nodes (wall s): runjob {fmt(ship['runjob'])}  pdcp {fmt(ship['pdcp'])}  "
          f"ratio {statistics.median(ship['runjob']) / statistics.median(ship['pdcp']):.2f}x")
    print(f"logs 4 nodes x {args.lines} lines (M lines/s, none lost): runjob {fmt(logs['runjob'])}  pdsh {fmt(logs['pdsh'])}  "
          f"ratio {statistics.median(logs['runjob']) / statistics.median(logs['pdsh']):.2f}x")
    print(f"peak RSS of the launcher's largest process (MiB): runjob {fmt(rss['runjob'])}  pdsh {fmt(rss['pdsh'])}")


if __name__ == "__main__":
    main()
