package org.runjob.launch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.runjob.cli.Cli;
import org.runjob.testbed.Pids;
import org.runjob.testbed.RunjobProcess;

/** Writes local test jobs around the worker scripts in src/test/resources/workers and runs them. */
final class LocalJobs {

    static final Path WORKERS = Path.of("src/test/resources/workers").toAbsolutePath();

    final Path dir;
    final Path pids;
    final Path logs;

    LocalJobs(Path dir) throws IOException {
        this.dir = dir;
        this.pids = Files.createDirectories(dir.resolve("pids"));
        this.logs = dir.resolve("runs");
    }

    /** A job of {@code nodes} local nodes with {@code perNode} workers each, running {@code script}. */
    Path job(String name, String script, int nodes, int perNode, Map<String, String> env, double grace, int restarts)
            throws IOException {
        StringBuilder y = new StringBuilder("name: " + name + "\nnodes:\n");
        for (int i = 1; i <= nodes; i++) {
            y.append("  - {name: n").append(i).append(", local: true, workers: ").append(perNode).append("}\n");
        }
        y.append("rendezvous: {port: auto}\n");
        y.append("entrypoint: {command: [python3, ").append(script).append("]}\n");
        y.append("files: [").append(WORKERS.resolve("common.py")).append(", ").append(WORKERS.resolve(script)).append("]\n");
        y.append("workdir: ").append(dir.resolve("work-" + name)).append("\n");
        y.append("logs: {dir: ").append(logs).append("}\n");
        y.append("failure: {grace_period_s: ").append(grace).append(", max_restarts: ").append(restarts).append("}\n");
        y.append("env:\n  PIDDIR: ").append(pids).append("\n");
        env.forEach((k, v) -> y.append("  ").append(k).append(": '").append(v).append("'\n"));
        Path file = dir.resolve(name + ".yaml");
        Files.writeString(file, y.toString());
        return file;
    }

    /** Sets {@code failure.heartbeat_timeout_s} of a job made by {@link #job}: the tests that wait for a lost agent or runjob. */
    static Path heartbeat(Path job, int seconds) throws IOException {
        Files.writeString(job, Files.readString(job).replaceFirst("failure: \\{", "failure: {heartbeat_timeout_s: " + seconds + ", "));
        return job;
    }

    /** runjob in this JVM (agents are still separate processes). */
    Cli runInProcess(Path job, String... extra) {
        return Cli.job(job, extra);
    }

    /** runjob as its own JVM, so it can be signalled and killed for real. */
    Process start(Path job) throws IOException {
        return RunjobProcess.start(dir, job);
    }

    String stderrOf(Path job) throws IOException {
        return RunjobProcess.stderrOf(dir, job);
    }

    /** The single run folder of a job. */
    Path runFolder(String name) throws IOException {
        try (var s = Files.list(logs.resolve(name))) {
            List<Path> runs = s.toList();
            if (runs.size() != 1) {
                throw new IllegalStateException("expected one run of " + name + ", found " + runs);
            }
            return runs.get(0);
        }
    }

    /** Waits until pid files {@code prefix-0.pid ... prefix-(n-1).pid} exist and returns their pids. */
    List<Long> awaitPids(String prefix, int n, Duration timeout) {
        return Pids.await(pids, prefix, n, timeout);
    }

    static void signal(Process p, String signal) throws IOException, InterruptedException {
        signal(p.pid(), signal);
    }

    static void signal(long pid, String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-s", signal, Long.toString(pid)).inheritIO().start();
        kill.waitFor(10, TimeUnit.SECONDS);
    }

}
