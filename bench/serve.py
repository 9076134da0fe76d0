#!/usr/bin/env python3
"""runjob serve, the lab's page, against what people use without it. Three parts, every exit code
checked:
  servers  a page open on 4 sshd hosts (the stand-in CUDA driver and NVML, 2 GPUs each; the
           testbed of bench/ssh.py) for SECONDS: serve at --interval 2, asked every 2 s as an open
           page asks; then, for as long, its peer: a loop that runs `pdsh -w HOSTS python3
           nvml.py` every 2 s (what a home-made SSH dashboard does: one NVML query per server per
           refresh). Reported: CPU-seconds here (serve's JVM; pdsh and its ssh) and on the nodes
           (every sshd's descendants, live ones read before serve ends: the agents, or the
           queries), per minute, and serve's peak RSS. The two alternate for --rounds rounds.
  latency  a local detached run prints 20 stamped lines a second; three readers follow it at once:
           the page's live log (Server-Sent Events), `runjob logs -f`, and `tail -F all.log` (the
           file itself, the floor). Each line's delay is the time it was read less the stamp the
           worker printed (one machine, one clock): median, p95, max per reader.
  load     200 ended runs in the run index: the front page's load (its HTML, script, style and
           /api/runs, one after the other, as a browser fetches them) against `runjob runs`,
           interleaved, --loads times each.
Needs root, iproute2, openssh-server, pdsh, cc (servers). Removes the testbed when done.
Usage: sudo bench/serve.py [--seconds 600] [--rounds 1] [--lines 600] [--loads 10] [--only servers|latency|load] [--json OUT]
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, spread, write_json  # noqa: E402
import ssh as bed  # noqa: E402

RUNJOB = os.path.join(ROOT, "bin", "runjob")
TICK = os.sysconf("SC_CLK_TCK")

NVML_QUERY = r'''
import ctypes
n = ctypes.CDLL("libnvidia-ml.so.1")
n.nvmlInit_v2()
c = ctypes.c_uint()
n.nvmlDeviceGetCount_v2(ctypes.byref(c))
for i in range(c.value):
    d = ctypes.c_void_p()
    n.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(d))
    u = (ctypes.c_uint * 2)()
    m = (ctypes.c_ulonglong * 3)()
    n.nvmlDeviceGetUtilizationRates(d, u)
    n.nvmlDeviceGetMemoryInfo(d, m)
    print(i, u[0], m[2] >> 20, m[0] >> 20)
'''

STAMPED = r'''
import os, sys, time
n = int(os.environ["LINES"])
for i in range(n):
    print("stamp %.6f %d" % (time.time(), i), flush=True)
    time.sleep(0.05)
time.sleep(2)
'''


def cpu(pid):
    """utime+stime (s) of a live process and its reaped children."""
    with open(f"/proc/{pid}/stat") as f:
        x = f.read().rsplit(")", 1)[1].split()
    return sum(int(v) for v in x[11:15]) / TICK


def nodes_cpu(procs):
    """CPU-seconds the sshd hosts ran: every sshd's reaped descendants, and its live ones (the agents) with their own reaped children."""
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    parent[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                pass
    roots = {p.pid for p in procs}
    total = 0.0
    for pid in parent:
        p, seen = parent.get(pid), 0
        while p and p not in roots and seen < 64:
            p, seen = parent.get(p), seen + 1
        if p in roots:
            try:
                total += cpu(pid)
            except OSError:
                pass
    return total + bed.sshd_cpu(procs)


def hwm(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1)) / 1024


def serve(env, args, cwd):
    p = subprocess.Popen([RUNJOB, "serve", "--port", "0", *args], env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    url = p.stdout.readline().strip()
    if not url.startswith("http://"):
        raise SystemExit("serve did not start: " + url + p.stderr.read())
    threading.Thread(target=p.stdout.read, daemon=True).start()
    return p, url


def jvm(p):
    """The JVM under bin/runjob's shell (it execs java: the same pid), else the first child."""
    kids = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
    return int(kids[0]) if kids else p.pid


def get(url, token, path):
    base = url.split("?")[0]
    req = urllib.request.Request(base + path.lstrip("/"), headers={"Cookie": "runjob_serve=" + token})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read()


def servers_part(a, tmp, rows):
    lib = os.path.join(tmp, "lib")
    os.makedirs(lib)
    for src, name in (("fakecuda.c", "libcuda.so.1"), ("fakenvml.c", "libnvidia-ml.so.1")):
        subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", os.path.join(lib, name), os.path.join(ROOT, "src", "test", "native", src)],
                       check=True)
    gpus = "Tesla_V100|16384|512|7.0|0000:3b:00;Tesla_V100|16384|0|7.0|0000:86:00"
    hosts, procs = bed.testbed(4, tmp, setenv=f"LD_LIBRARY_PATH={lib} FAKECUDA_GPUS={gpus}")
    try:
        job = bed.job(tmp, "lab", hosts, ["true"])
        with open(os.path.join(tmp, "nvml.py"), "w") as f:
            f.write(NVML_QUERY)
        env = dict(os.environ, XDG_STATE_HOME=os.path.join(tmp, "state"))
        res = {"runjob serve": ([], [], []), "pdsh + NVML query": ([], [], [])}
        for _ in range(a.rounds):
            nodes0 = nodes_cpu(procs)
            p, url = serve(env, ["--interval", "2", job], tmp)
            token = url.split("token=")[1]
            java = jvm(p)
            end = time.monotonic() + a.seconds
            asked = 0
            while time.monotonic() < end:
                s = json.loads(get(url, token, "/api/servers"))["servers"]
                asked += 1
                time.sleep(2)
            up = [x["state"] for x in s]
            if up != ["up"] * 4:
                raise SystemExit("serve's servers: " + json.dumps(s))
            here = cpu(java)
            peak = hwm(java)
            nodes = nodes_cpu(procs) - nodes0  # the agents, live, and what the logins cost
            p.terminate()
            code = p.wait(60)
            if code != 0:
                raise SystemExit(f"serve exited {code}")
            res["runjob serve"][0].append(here / a.seconds * 60)
            res["runjob serve"][1].append(nodes / a.seconds * 60)
            res["runjob serve"][2].append(peak)
            print(f"  serve: {here:.1f} CPU-s here, {nodes:.1f} CPU-s on 4 nodes, peak RSS {peak:.0f} MiB, {asked} asks", flush=True)

            nodes0 = nodes_cpu(procs)
            t0 = os.times()
            end = time.monotonic() + a.seconds
            queries = 0
            while time.monotonic() < end:
                r = subprocess.run(["pdsh", "-R", "ssh", "-w", ",".join(hosts), "python3", os.path.join(tmp, "nvml.py")],
                                   env=dict(os.environ, PDSH_SSH_ARGS_APPEND=f"-i {tmp}/id -o UserKnownHostsFile={tmp}/known_hosts "
                                            "-o StrictHostKeyChecking=yes -l root"),
                                   capture_output=True, text=True)
                if r.returncode != 0 or r.stdout.count("\n") != 8:
                    raise SystemExit(f"pdsh exited {r.returncode}: {r.stdout}{r.stderr}")
                queries += 1
                time.sleep(2)
            t1 = os.times()
            here = (t1.children_user + t1.children_system) - (t0.children_user + t0.children_system)
            nodes = nodes_cpu(procs) - nodes0
            res["pdsh + NVML query"][0].append(here / a.seconds * 60)
            res["pdsh + NVML query"][1].append(nodes / a.seconds * 60)
            print(f"  pdsh: {here:.1f} CPU-s here, {nodes:.1f} CPU-s on 4 nodes, {queries} queries", flush=True)
        print(f"servers: 4 sshd hosts x 2 stand-in GPUs, a sample every 2 s, {a.seconds} s x {a.rounds} rounds")
        print(f"{'':<20} {'CPU-s/min here':<24} {'CPU-s/min on 4 nodes':<24} {'peak RSS MiB':<16}")
        for k, (h, n, m) in res.items():
            print(f"{k:<20} {spread(h):<24} {spread(n):<24} {spread(m, '{:.0f}') if m else '-':<16}")
            rows.append({"part": "servers", "tool": k, "cpu_s_per_min_here": h, "cpu_s_per_min_nodes": n, "peak_rss_mib": m})
        s, p = res["runjob serve"], res["pdsh + NVML query"]
        print(f"ratio serve/pdsh: here {statistics.median(s[0]) / statistics.median(p[0]):.2f}, "
              f"nodes {statistics.median(s[1]) / statistics.median(p[1]):.2f}")
    finally:
        bed.teardown(4)


def latency_part(a, tmp, rows):
    d = os.path.join(tmp, "latency")
    os.makedirs(d)
    with open(os.path.join(d, "stamped.py"), "w") as f:
        f.write(STAMPED)
    with open(os.path.join(d, "job.yaml"), "w") as f:
        f.write(f"name: stamped\nnodes:\n  - {{name: n1, local: true, workers: 1}}\nentrypoint: {{command: [python3, stamped.py]}}\n"
                f"files: [stamped.py]\nenv: {{LINES: '{a.lines}'}}\nlogs: {{dir: {d}/runs}}\nworkdir: {d}/work\n")
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(d, "state"))
    p, url = serve(env, ["--logs-dir", os.path.join(d, "runs")], d)
    token = url.split("token=")[1]
    r = subprocess.run([RUNJOB, "--detach", "job.yaml"], env=env, cwd=d, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("runjob --detach exited " + str(r.returncode) + r.stderr)
    run = r.stdout.strip()
    delays = {"page (SSE)": [], "runjob logs -f": [], "tail -F all.log": []}

    def reader(name, lines):
        for line in lines:
            m = re.search(r"stamp (\d+\.\d+) (\d+)", line)
            if m:
                delays[name].append(time.time() - float(m.group(1)))
                if int(m.group(2)) == a.lines - 1:
                    return

    def sse():
        req = urllib.request.Request(url.split("?")[0] + f"api/run/{run}/log", headers={"Cookie": "runjob_serve=" + token})
        with urllib.request.urlopen(req, timeout=120) as resp:
            reader("page (SSE)", (raw.decode() for raw in resp if raw.startswith(b"data: ")))

    logs = subprocess.Popen([RUNJOB, "logs", "-f", run, "--logs-dir", os.path.join(d, "runs")], env=env, stdout=subprocess.PIPE, text=True)
    log = os.path.join(d, "runs", "stamped", run, "all.log")
    while not os.path.exists(log):
        time.sleep(0.01)
    tail = subprocess.Popen(["tail", "-n", "+1", "-F", log], stdout=subprocess.PIPE, text=True)
    threads = [threading.Thread(target=sse), threading.Thread(target=reader, args=("runjob logs -f", logs.stdout)),
               threading.Thread(target=reader, args=("tail -F all.log", tail.stdout))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(a.lines * 0.05 + 120)
    tail.terminate()
    code = logs.wait(120)
    p.terminate()
    if p.wait(60) != 0 or code != 0:
        raise SystemExit(f"serve or runjob logs -f failed: {code}")
    print(f"latency: {a.lines} lines at 20 a second, the worker's stamp to the reader (ms)")
    print(f"{'reader':<20} {'lines':<7} {'median':<9} {'p95':<9} {'max':<9}")
    for k, v in delays.items():
        v = sorted(x * 1000 for x in v)
        if len(v) != a.lines:
            raise SystemExit(f"{k} read {len(v)} of {a.lines} lines")
        p95 = v[int(len(v) * 0.95) - 1]
        print(f"{k:<20} {len(v):<7} {statistics.median(v):<9.1f} {p95:<9.1f} {v[-1]:<9.1f}")
        rows.append({"part": "latency", "reader": k, "ms": v})


def load_part(a, tmp, rows):
    d = os.path.join(tmp, "load")
    state = os.path.join(d, "state", "runjob", "runs")
    os.makedirs(state, mode=0o700)
    os.chmod(os.path.join(d, "state"), 0o700)
    os.chmod(os.path.join(d, "state", "runjob"), 0o700)
    for i in range(200):
        rid = "20261130-%06d-%04x" % (i, i)
        folder = os.path.join(d, "many", "many", rid)
        os.makedirs(folder)
        with open(os.path.join(folder, "summary.json"), "w") as f:
            json.dump({"job": "many", "run_id": rid, "result": "succeeded", "exit_code": 0, "start": "2026-11-30T00:00:00Z",
                       "end": "2026-11-30T00:00:01Z"}, f)
        with open(os.path.join(state, rid + ".json"), "w") as f:
            json.dump({"run_id": rid, "job": "many", "started": "2026-11-30T00:00:00Z", "folder": folder}, f)
        os.chmod(os.path.join(state, rid + ".json"), 0o600)
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(d, "state"))
    p, url = serve(env, [], d)
    token = url.split("token=")[1]
    page, cli = [], []
    for _ in range(a.loads):
        t = time.monotonic()
        for path in ("/", "/static/lab.js", "/static/lab.css"):
            get(url, token, path)
        n = len(json.loads(get(url, token, "/api/runs"))["runs"])
        page.append(time.monotonic() - t)
        if n != 200:
            raise SystemExit(f"the page listed {n} runs, not 200")
        t = time.monotonic()
        r = subprocess.run([RUNJOB, "runs"], env=env, cwd=d, capture_output=True, text=True)
        cli.append(time.monotonic() - t)
        if r.returncode != 0 or r.stdout.count("\n") != 201:
            raise SystemExit(f"runjob runs exited {r.returncode} with {r.stdout.count(chr(10))} lines")
    p.terminate()
    if p.wait(60) != 0:
        raise SystemExit("serve failed")
    print(f"load: 200 runs in the index, {a.loads} times each, interleaved (s)")
    print(f"{'the page (HTML, script, style, /api/runs)':<44} {spread(page, '{:.3f}')}")
    print(f"{'runjob runs (a JVM each)':<44} {spread(cli, '{:.3f}')}")
    rows.append({"part": "load", "page_s": page, "runs_s": cli})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=600)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--lines", type=int, default=600)
    ap.add_argument("--loads", type=int, default=10)
    ap.add_argument("--only", choices=["servers", "latency", "load"])
    ap.add_argument("--json")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-serve-")
    rows = []
    subprocess.run([RUNJOB, "--version"], check=True, stdout=subprocess.DEVNULL)  # builds the jar once, untimed
    try:
        for part, fn in (("latency", latency_part), ("load", load_part), ("servers", servers_part)):
            if a.only in (None, part):
                fn(a, tmp, rows)
    finally:
        shutil.rmtree(tmp, True)
    write_json(a.json, "serve", a.rounds, rows)


if __name__ == "__main__":
    main()
