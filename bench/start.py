#!/usr/bin/env python3
"""Start-up benchmark: what one runjob command and one agent cost, beside a bare JVM, interleaved.

Each round runs, one after the other: `java -version` (the floor every JVM pays), runjob's
`validate`, `--dry-run`, `runs` and `status` on jobs/local.yaml's kind of job (through bin/runjob,
with its class-data archive), and one agent start and exit as a node runs it (the watchdog's python3
making it a child subreaper, then the bootstrap's JVM flags and class-data archive, empty stdin:
HELLO, then DONE), and the same on a node without python3 (the agent loads JNA for the prctl); both
from the agent artifact nodes run, and from runjob's whole jar.
R rounds; every exit code is checked.
Reported per command: median (min-max) of wall seconds and CPU-seconds (wait4 rusage of the whole
tree), and the ratio of the median wall time to `java -version`'s. Compare two builds by running
the script of each (it measures the tree it lives in). With --release DIR (an unpacked release
archive) the same four commands run through DIR/bin/runjob in the same rounds, on the archive's
own runtime. With --aot JAVA (the java of a JDK 25 or newer) the same rounds also run, on that
runtime, `java -version`, the dry run with its own default class-data archive, and the dry run and
the agent start each with an AOT cache (JEP 483/514: made once by a training run of the same
command, -XX:AOTCacheOutput, then used by -XX:AOTCache), with bin/runjob's and the bootstrap's
flags, beside today's Java 17 with runjob's class-data archive. No timing is asserted anywhere.
Usage: bench/start.py [--runs 9] [--release DIR] [--aot JAVA] [--json OUT]
"""
import argparse
import atexit
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

from common import write_json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNJOB = os.path.join(ROOT, "bin", "runjob")
# the watchdog's PR_SUBREAPER (agent/Watchdog.java)
SUBREAPER = ("import ctypes, os, sys\n"
             "if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0: os.environ[\"RUNJOB_SUBREAPER\"] = \"1\"\n"
             "os.execvp(sys.argv[1], sys.argv[1:])\n")
AGENT_MAIN = "org.runjob.agent.AgentMain"
AGENT_FLAGS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-XX:+DisplayVMOutputToStderr", "-Xlog:disable",
               "-Xlog:all=warning,cds*=off:stderr"]


def timed(cmd, cwd, stdin=subprocess.DEVNULL):
    """(exit code, wall s, CPU-s of the tree)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), time.monotonic() - t0, usage.ru_utime + usage.ru_stime


def newest_copy():
    """The jar bin/runjob runs (its per-build copy, else target/runjob.jar)."""
    copies = sorted(glob.glob(os.path.join(ROOT, "target", "run", "runjob-*.jar")), key=os.path.getmtime)
    return copies[-1] if copies else os.path.join(ROOT, "target", "runjob.jar")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--json")
    ap.add_argument("--release", help="an unpacked release archive: its bin/runjob measured beside this tree's")
    ap.add_argument("--aot", help="the java of a JDK 25+: its AOT cache measured beside Java 17's class-data archive")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="runjob-start-")
    atexit.register(shutil.rmtree, tmp, True)  # its runs, archives and jars: nothing is kept
    job = os.path.join(tmp, "job.yaml")
    with open(job, "w") as f:
        f.write("name: start\nnodes:\n  - {name: n1, local: true, workers: 2}\n  - {name: n2, local: true, workers: 2}\n"
                f"entrypoint: {{command: [true]}}\nlogs: {{dir: {tmp}/runs}}\nworkdir: {tmp}/work\n")
    if subprocess.run([RUNJOB, job], cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
        sys.exit("runjob could not run the job once (to have a run for status)")
    whole = newest_copy()
    # the agent artifact nodes run, as runjob's jar carries it (AgentBundle.EMBEDDED)
    lean = os.path.join(tmp, "runjob-agent.jar")
    with zipfile.ZipFile(whole) as z, open(lean, "wb") as out:
        out.write(z.read("META-INF/runjob/agent.jar"))
    archives = {}
    for kind, jar in (("lean", lean), ("whole", whole)):
        archives[kind] = os.path.join(tmp, f"agent-{kind}.jsa")
        subprocess.run(["java", *AGENT_FLAGS, f"-XX:ArchiveClassesAtExit={archives[kind]}", "-cp", jar, AGENT_MAIN, "agent"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def agent(kind, jar):
        return ["java", *AGENT_FLAGS, f"-XX:SharedArchiveFile={archives[kind]}", "-cp", jar, AGENT_MAIN, "agent"]

    commands = {
        "java -version": ["java", "-version"],
        "validate": [RUNJOB, "validate", job],
        "--dry-run": [RUNJOB, "--dry-run", job],
        "runs": [RUNJOB, "runs", "--logs-dir", f"{tmp}/runs"],
        "status": [RUNJOB, "status", "last", "--logs-dir", f"{tmp}/runs"],
        # as a node starts it: python3 makes it a child subreaper and execs java (the watchdog's PR_SUBREAPER)
        "agent start+exit": ["/usr/bin/python3", "-I", "-S", "-c", SUBREAPER, *agent("lean", lean)],
        # a node without /usr/bin/python3: the agent makes itself a subreaper through JNA
        "agent, no python3 (JNA)": agent("lean", lean),
        # the same two from runjob's whole jar (what nodes ran before the agent artifact)
        "agent, whole jar": ["/usr/bin/python3", "-I", "-S", "-c", SUBREAPER, *agent("whole", whole)],
        "agent, whole jar, JNA": agent("whole", whole),
    }
    if a.release:
        released = os.path.join(os.path.abspath(a.release), "bin", "runjob")
        # its first command makes its class-data archive: not measured
        if subprocess.run([released, "--version"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
            sys.exit(f"{released} --version failed")
        for name in ["validate", "--dry-run", "runs", "status"]:
            commands["release " + name] = [released] + commands[name][1:]
    if a.aot:
        # bin/runjob's flags for a dry run, and the bootstrap's for an agent (its log tags quiet the AOT cache too)
        launcher = ["-XX:+UseSerialGC", "-Xms16m", "-Xmx160m", "-XX:+ExitOnOutOfMemoryError", "-XX:TieredStopAtLevel=1",
                    "-XX:CICompilerCount=1"]
        dry = ["-jar", whole, "--dry-run", job]
        agent_flags = [f for f in AGENT_FLAGS if not f.startswith(("-Xlog:all", "-Xshare"))] + ["-Xlog:all=warning,cds*=off,aot*=off:stderr"]
        agent_args = ["-cp", lean, AGENT_MAIN, "agent"]
        caches = {"dry": os.path.join(tmp, "dry.aot"), "agent": os.path.join(tmp, "agent.aot")}
        for kind, args in (("dry", launcher + dry), ("agent", agent_flags + agent_args)):
            made = subprocess.run([a.aot, f"-XX:AOTCacheOutput={caches[kind]}", *args], cwd=tmp, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if made.returncode != 0 or not os.path.exists(caches[kind]):
                sys.exit(f"{a.aot}: no AOT cache for the {kind} command (exit {made.returncode}): {made.stderr[-2000:]}")
        commands["aot: java -version"] = [a.aot, "-version"]
        commands["aot: --dry-run, no cache"] = [a.aot, *launcher, *dry]
        commands["aot: --dry-run, AOT cache"] = [a.aot, f"-XX:AOTCache={caches['dry']}", *launcher, *dry]
        commands["aot: agent, AOT cache"] = ["/usr/bin/python3", "-I", "-S", "-c", SUBREAPER, a.aot, f"-XX:AOTCache={caches['agent']}",
                                             *agent_flags, *agent_args]
    results = {k: [] for k in commands}
    for _ in range(a.runs):
        for name, cmd in commands.items():
            code, wall, cpu = timed(cmd, tmp)
            if code != 0:
                sys.exit(f"{name}: exit {code}")
            results[name].append((wall, cpu))
    base = statistics.median(w for w, _ in results["java -version"])
    rows = []
    print(f"{'command':26} {'wall s median (min-max)':28} {'CPU-s median (min-max)':28} {'x java -version':>15}")
    for name, rs in results.items():
        walls = [w for w, _ in rs]
        cpus = [c for _, c in rs]
        row = {"command": name, "wall_median": statistics.median(walls), "wall_min": min(walls), "wall_max": max(walls),
               "cpu_median": statistics.median(cpus), "cpu_min": min(cpus), "cpu_max": max(cpus),
               "ratio_to_java_version": statistics.median(walls) / base}
        rows.append(row)
        print(f"{name:26} {row['wall_median']:.3f} ({row['wall_min']:.3f}-{row['wall_max']:.3f}){'':8} "
              f"{row['cpu_median']:.3f} ({row['cpu_min']:.3f}-{row['cpu_max']:.3f}){'':8} {row['ratio_to_java_version']:>14.1f}x")
    write_json(a.json, "start", a.runs, rows)


if __name__ == "__main__":
    main()
