#!/usr/bin/env python3
"""SSH benchmark on a throw-away testbed: runjob against pdsh, pdcp, scp and ssh, in one run.

Builds N hosts as network namespaces on a bridge, each with its own sshd (as the test suite
does), then prints one table:
  launch    wall time of a trivial job (`true`, one worker per node) at N = 1, 4, 16,
            beside `pdsh -R ssh -w HOSTS true`
  ship      a 100 MiB file to N = 1, 4, 16 nodes: runjob's first run (sent) and second run
            (unchanged, skipped by SHA-256), beside pdcp and parallel scp
  logs      2M lines from one remote worker through runjob (first worker start to last end, from
            summary.json, and wall time), beside `ssh HOST cat` of as many bytes
Needs root, iproute2, openssh-server, pdsh (Debian: pdsh). Removes the testbed when done.
Usage: sudo bench/ssh.py [--hosts 16] [--runs 3]
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


def timed(cmd, env=None, stdout=subprocess.DEVNULL):
    start = time.monotonic()
    p = subprocess.run(cmd, env=env, stdout=stdout, stderr=subprocess.DEVNULL)
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd)}")
    return time.monotonic() - start


def med(f, runs):
    xs = [f() for _ in range(runs)]
    return statistics.median(xs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=16)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench/ssh.py needs root (network namespaces)")
    subprocess.run([RUNJOB, "--version"], check=True, stdout=subprocess.DEVNULL)
    tmp = tempfile.mkdtemp(prefix="runjob-sshbench-")
    teardown(args.hosts)
    rows = []
    try:
        hosts, _ = testbed(args.hosts, tmp)
        ssh_opts = f"-i {tmp}/id -o UserKnownHostsFile={tmp}/known_hosts -o StrictHostKeyChecking=yes -o BatchMode=yes"
        env = dict(os.environ, PDSH_RCMD_TYPE="ssh", PDSH_SSH_ARGS_APPEND=ssh_opts)
        sizes = [n for n in (1, 4, 16) if n <= len(hosts)]
        for n in sizes:
            j = job(tmp, f"true{n}", hosts[:n], ["true"])
            timed([RUNJOB, j])  # ships the agent jar once
            t = med(lambda: timed([RUNJOB, j]), args.runs)
            rows.append(("launch", f"runjob, trivial job on {n} node(s)", f"{t:.2f} s"))
            t = med(lambda: timed(["pdsh", "-w", ",".join(hosts[:n]), "true"], env=env), args.runs)
            rows.append(("launch", f"pdsh -w ({n}) true", f"{t:.2f} s"))
        big = f"{tmp}/big.bin"
        with open(big, "wb") as f:
            f.write(os.urandom(100 * 1024 * 1024))
        for n in sizes:
            j = job(tmp, f"ship{n}", hosts[:n], ["true"], [big])
            first = timed([RUNJOB, j])
            second = timed([RUNJOB, j])
            rows.append(("ship", f"runjob, 100 MiB to {n} node(s), first run (job incl.)", f"{first:.2f} s"))
            rows.append(("ship", f"runjob, same file unchanged, second run", f"{second:.2f} s"))
            for i in range(n):
                os.makedirs(f"{tmp}/pdcp/{i}", exist_ok=True)
            t = timed(["pdcp", "-w", ",".join(hosts[:n]), big, f"{tmp}/pdcp/big.bin"], env=env)
            rows.append(("ship", f"pdcp, 100 MiB to {n} node(s)", f"{t:.2f} s"))
            start = time.monotonic()
            procs = [subprocess.Popen(["scp", "-q"] + ssh_opts.split() + [big, f"root@{h}:{tmp}/scp-{i}.bin"])
                     for i, h in enumerate(hosts[:n])]
            for p in procs:
                p.wait()
            rows.append(("ship", f"parallel scp, 100 MiB to {n} node(s)", f"{time.monotonic() - start:.2f} s"))
        lines = 2_000_000
        j = job(tmp, "logs", hosts[:1], ["python3", "lines.py"], [f"{WORKERS}/lines.py"])
        with open(f"{tmp}/logs.yaml", "a") as f:
            f.write(f"env: {{LINES: '{lines}'}}\n")
        timed([RUNJOB, j])
        shutil.rmtree(f"{tmp}/runs/logs", ignore_errors=True)
        with open(f"{tmp}/console.out", "wb") as out:
            t = timed([RUNJOB, j], stdout=out)
        nbytes = sum(len(f"rank 0 line {i}\n") for i in range(lines)) + sum(len(f"rank 0 err {i}\n") for i in range(0, lines, 1000))
        w = worker_seconds(f"{tmp}/runs/logs")
        rows.append(("logs", f"runjob, {lines} lines from one remote worker (worker's run)", f"{lines / w / 1e6:.2f} M lines/s, {nbytes / w / 1e6:.1f} MB/s"))
        rows.append(("logs", f"runjob, the same, wall time incl. start-up", f"{t:.2f} s"))
        with open(f"{tmp}/lines.txt", "w") as f:
            for i in range(lines):
                f.write(f"rank 0 line {i}\n")
        t = timed(["ssh"] + ssh_opts.split() + [f"root@{hosts[0]}", "cat", f"{tmp}/lines.txt"])
        rows.append(("logs", f"ssh HOST cat, the same bytes (wall)", f"{lines / t / 1e6:.2f} M lines/s, {nbytes / t / 1e6:.1f} MB/s"))
    finally:
        teardown(args.hosts)
        shutil.rmtree(tmp, ignore_errors=True)
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    print(f"{'scenario'.ljust(w0)}  {'what'.ljust(w1)}  result")
    print(f"{'-' * w0}  {'-' * w1}  ------")
    for r in rows:
        print(f"{r[0].ljust(w0)}  {r[1].ljust(w1)}  {r[2]}")


if __name__ == "__main__":
    main()
