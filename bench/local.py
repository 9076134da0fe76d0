#!/usr/bin/env python3
"""Local-launch benchmark: runjob, torchrun and no launcher at all, interleaved, on this machine.

Each round runs every tool once per scenario, one after the other, R rounds; every exit code is
checked (a crashing peer is not a fast peer). Scenarios, 4 workers each:
  startup   the check-in job (examples/checkin: rank 0 listens, the others check in over TCP)
  teardown  rank 1 fails once all are up (it records the instant), the others sleep: seconds from
            the failure to the launcher's exit (no launcher: not applicable)
  output    4 x LINES lines printed as fast as Python can, through the launcher's console into a file
            (no launcher: the workers write straight to files); M lines/s over the whole wall time
Reported per tool: median (min-max) of wall seconds, CPU-seconds of the whole process tree (wait4
rusage: launcher, agents, workers) and the peak RSS of its largest process (GNU time: see
common.PeakRss for why not wait4).
torchrun is Debian's 1.13 on Python 3.11: it crashes at start (Std.from_str returns None for "0"
and "3" since Python 3.11's IntFlag iteration) unless --redirects and --tee are given values it can
parse; it runs with --redirects 1 --tee 1 (stdout to its log files and the console).
Usage: bench/local.py [--runs 5] [--lines 500000] [--json OUT]   (torchrun rows need PyTorch; no timing is asserted)
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

from common import PeakRss, write_json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNJOB = os.path.join(ROOT, "bin", "runjob")
WORKERS = os.path.join(ROOT, "src", "test", "resources", "workers")
CHECKIN = os.path.join(ROOT, "examples", "checkin", "checkin.py")
TORCHRUN = shutil.which("torchrun")
PYTHON = "/usr/bin/python3"


def timed(cmd, env, cwd, stdout=subprocess.DEVNULL):
    """(exit code, wall s, CPU-s of the tree, peak RSS MiB of its largest process)."""
    t0 = time.monotonic()
    rss = PeakRss()
    p = subprocess.Popen(rss.wrap(cmd), env=env, cwd=cwd, stdout=stdout, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), time.monotonic() - t0, usage.ru_utime + usage.ru_stime, rss.last()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def job_file(tmp, name, script, env, grace=5):
    lines = [f"name: {name}", "nodes:", "  - {name: n1, local: true, workers: 2}", "  - {name: n2, local: true, workers: 2}",
             "rendezvous: {port: auto}", f"entrypoint: {{command: [{PYTHON}, {os.path.basename(script)}]}}",
             f"files: [{WORKERS}/common.py, {script}]", f"workdir: {tmp}/work-{name}",
             f"logs: {{dir: {tmp}/runs}}", f"failure: {{grace_period_s: {grace}}}"]
    if env:
        lines += ["env:"] + [f"  {k}: '{v}'" for k, v in env.items()]
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


class NoLauncher:
    """4 workers started by hand with the variables a launcher would set, waited for together."""

    def __init__(self, script, env, out_dir):
        self.script, self.env, self.out_dir = script, env, out_dir

    def __call__(self):
        port = free_port()
        t0 = time.monotonic()
        procs = []
        for r in range(4):
            e = dict(self.env, RANK=str(r), LOCAL_RANK=str(r % 2), WORLD_SIZE="4", LOCAL_WORLD_SIZE="2", NODE_RANK=str(r // 2),
                     MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RUNJOB_NODE=f"n{r // 2 + 1}", PYTHONPATH=WORKERS)
            f = open(os.path.join(self.out_dir, f"direct-{r}.out"), "wb")
            peak = PeakRss()
            procs.append((subprocess.Popen(peak.wrap([PYTHON, self.script]), env=e, stdout=f, stderr=f), f, peak))
        code, cpu, rss = 0, 0.0, 0.0
        for p, f, peak in procs:
            _, status, usage = os.wait4(p.pid, 0)
            f.close()
            code = code or os.waitstatus_to_exitcode(status)
            cpu += usage.ru_utime + usage.ru_stime
            rss = max(rss, peak.last())
        return code, time.monotonic() - t0, cpu, rss


def fmt(xs, unit=""):
    return f"{statistics.median(xs):.2f}{unit} ({min(xs):.2f}-{max(xs):.2f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--lines", type=int, default=500_000)
    ap.add_argument("--json", help="also write the rows, machine, commit and date here")
    args = ap.parse_args()
    subprocess.run([RUNJOB, "--version"], check=True, stdout=subprocess.DEVNULL)  # builds the jar when needed
    tmp = tempfile.mkdtemp(prefix="runjob-bench-")
    base = dict(os.environ)
    stamp = os.path.join(tmp, "failed-at")
    fail_env = {"FAIL_RANK": "1", "FAIL_AFTER_S": "1", "PIDDIR": tmp, "FAILED_AT": stamp}
    out_env = {"LINES": str(args.lines)}
    shutil.copy(os.path.join(WORKERS, "common.py"), tmp)
    torch = [TORCHRUN, "--standalone", "--nproc_per_node", "4", "--redirects", "1", "--tee", "1", "--log_dir", f"{tmp}/torchrun-logs"]

    def tools(name, script, env, want):
        job = job_file(tmp, name, script, env)
        t = {"runjob": (lambda: timed([RUNJOB, job], base, tmp), want)}
        if TORCHRUN:
            t["torchrun"] = (lambda: timed(torch + [script], dict(base, **env, NODE_RANK="0", RUNJOB_NODE="local", PYTHONPATH=WORKERS), tmp),
                             want)
        if name != "teardown":
            t["no launcher"] = (NoLauncher(script, dict(base, **env), tmp), 0)
        return t

    scenarios = {
        "startup": tools("startup", CHECKIN, {}, 0),
        "teardown": tools("teardown", os.path.join(WORKERS, "fail_one.py"), fail_env, 1),
        "output": tools("output", os.path.join(WORKERS, "lines.py"), out_env, 0),
    }
    results = {(s, t): [] for s in scenarios for t in scenarios[s]}
    for _ in range(args.runs):
        for s, ts in scenarios.items():
            for t, (run, want) in ts.items():
                for f in os.listdir(tmp):
                    if f.endswith(".pid") or f == "failed-at":
                        os.remove(os.path.join(tmp, f))
                code, wall, cpu, rss = run()
                if code != want:
                    sys.exit(f"{s}: {t} exited {code}, wanted {want}")
                if s == "teardown":
                    with open(stamp) as f:
                        wall = time.time() - float(f.read())
                results[(s, t)].append((wall, cpu, rss))
    print(f"bench/local.py  {time.strftime('%Y-%m-%d')}  {os.cpu_count()} cores  runs={args.runs}  lines={args.lines}")
    print(f"{'scenario':<9} {'tool':<12} {'wall s':<20} {'CPU-s (tree)':<20} {'peak RSS MiB':<14} {'M lines/s':<10}")
    out = []
    for (s, t), rows in results.items():
        walls = [r[0] for r in rows]
        rate = f"{4 * args.lines / statistics.median(walls) / 1e6:.2f}" if s == "output" else ""
        print(f"{s:<9} {t:<12} {fmt(walls):<20} {fmt([r[1] for r in rows]):<20} {statistics.median([r[2] for r in rows]):<14.0f} {rate:<10}")
        out.append({"scenario": s, "tool": t, "wall": fmt(walls), "cpu": fmt([r[1] for r in rows]),
                    "peak_rss_mib": round(statistics.median([r[2] for r in rows])), "m_lines_per_s": rate})
    write_json(args.json, "local", args.runs, out, lines=args.lines)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
