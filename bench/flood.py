#!/usr/bin/env python3
"""Peak memory of runjob and of its agent when a worker or a setup floods a stream, for two runjobs
side by side (this tree's and one given with --before, e.g. a checkout of an older commit).

Cases, each a local one-node job run by bin/runjob (its -Xmx160m heap cap, as users get it), with
its stdout and stderr going to files:
  setup    the setup prints a 256 MiB line without a newline, then 256 MiB of 1 KiB lines
  metrics  the worker appends JSON metrics lines as fast as it can for 20 s
  outputs  the worker leaves 10,000 small files and a 1 GiB sparse file in outputs
The two runjobs alternate in each round. Every 50 ms the bench reads VmHWM (the kernel's peak
RSS) of runjob's JVM and of every process under it whose command names the agent; it reports
each one's highest, the wall time, runjob's exit code (0 expected; any other is shown, never
dropped) and whether summary.json was written.
Usage: bench/flood.py --before DIR [--runs 2] [--cases setup,metrics,outputs] [--json OUT]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, spread, write_json  # noqa: E402

WORKERS = os.path.join(ROOT, "src", "test", "resources", "workers")


def job(tmp, case):
    name = f"flood-{case}"
    lines = ["name: " + name, "nodes:", "  - {name: n1, local: true, workers: 1}",
             "workdir: " + os.path.join(tmp, "work"), "logs: {dir: " + os.path.join(tmp, "runs") + "}"]
    files = [os.path.join(WORKERS, "common.py")]
    if case == "setup":
        files.append(os.path.join(WORKERS, "lines.py"))
        lines += ["entrypoint: {command: [python3, lines.py]}", "env: {LINES: '1'}",
                  "environment: {setup: ['python3 " + os.path.join(WORKERS, "setup_flood.py") + " 256 262144']}"]
    elif case == "metrics":
        files.append(os.path.join(WORKERS, "metrics_flood.py"))
        lines += ["entrypoint: {command: [python3, metrics_flood.py]}", "env: {FLOOD_S: '20'}"]
    else:
        files.append(os.path.join(WORKERS, "many_outputs.py"))
        lines += ["entrypoint: {command: [python3, many_outputs.py]}", "env: {FILES: '10000', SPARSE_MIB: '1024'}",
                  "outputs: [out]"]
    lines.append("files: [" + ", ".join(files) + "]")
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def children(pid):
    """Every process under PID."""
    kids = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
                kids.setdefault(parent, []).append(int(p))
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def hwm(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def one(runjob_dir, case):
    tmp = tempfile.mkdtemp(prefix="bench-flood-")
    try:
        path = job(tmp, case)
        with open(os.path.join(tmp, "out"), "w") as out, open(os.path.join(tmp, "err"), "w") as err:
            begin = time.monotonic()
            p = subprocess.Popen([os.path.join(runjob_dir, "bin", "runjob"), path], stdout=out, stderr=err, cwd=tmp)
            peak_runjob, peak_agent, java = 0, 0, None
            while p.poll() is None:
                if java is None:
                    java = next((c for c in [p.pid] + children(p.pid) if "java" in cmdline(c).split(" ")[0]), None)
                if java is not None:
                    peak_runjob = max(peak_runjob, hwm(java))
                    for c in children(java):
                        if "agent" in cmdline(c):
                            peak_agent = max(peak_agent, hwm(c))
                time.sleep(0.05)
            wall = time.monotonic() - begin
        runs = os.path.join(tmp, "runs", f"flood-{case}")
        summary = any(os.path.exists(os.path.join(runs, r, "summary.json")) for r in (os.listdir(runs) if os.path.isdir(runs) else []))
        with open(os.path.join(tmp, "err")) as f:
            tail = f.read()[-300:]
        return {"exit": p.returncode, "runjob_mib": peak_runjob, "agent_mib": peak_agent, "wall_s": wall, "summary": summary,
                "err_tail": tail if p.returncode else ""}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, help="a runjob tree to compare with (its bin/runjob)")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--cases", default="setup,metrics,outputs")
    ap.add_argument("--json")
    a = ap.parse_args()
    sides = {"before": os.path.abspath(a.before), "now": ROOT}
    rows = []
    for case in a.cases.split(","):
        got = {s: [] for s in sides}
        for i in range(a.runs):
            for side, d in sides.items():
                r = one(d, case)
                got[side].append(r)
                print(f"{case} {side} run {i}: exit {r['exit']}, runjob {r['runjob_mib']} MiB, agent {r['agent_mib']} MiB, "
                      f"{r['wall_s']:.1f} s, summary {'yes' if r['summary'] else 'no'} {r['err_tail'][-160:]!r}", flush=True)
        for side in sides:
            rs = got[side]
            row = {"case": case, "side": side, "exits": [r["exit"] for r in rs], "summaries": sum(r["summary"] for r in rs),
                   "runjob_mib": spread([r["runjob_mib"] for r in rs], "{:.0f}"), "agent_mib": spread([r["agent_mib"] for r in rs], "{:.0f}"),
                   "wall_s": spread([r["wall_s"] for r in rs], "{:.1f}")}
            rows.append(row)
            print(f"  {case:8} {side:6} exits {row['exits']}  summary.json {row['summaries']}/{len(rs)}  runjob {row['runjob_mib']} MiB"
                  f"  agent {row['agent_mib']} MiB  wall {row['wall_s']} s", flush=True)
    write_json(a.json, "flood", a.runs, rows)


if __name__ == "__main__":
    main()
