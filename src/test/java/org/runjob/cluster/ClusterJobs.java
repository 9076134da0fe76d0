package org.runjob.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.runjob.cli.Cli;
import org.runjob.testbed.RunjobProcess;
import org.runjob.testbed.SshTestbed;
import org.runjob.testbed.Testbed;

/** Job files for the SSH testbed's hosts, and ways to run them. */
final class ClusterJobs {

    static final Path WORKERS = Path.of("src/test/resources/workers").toAbsolutePath();
    static final Path DDP = Path.of("examples/ddp/train.py").toAbsolutePath();

    final SshTestbed bed;
    final Path dir;
    final Path pids;
    final Path logs;

    ClusterJobs(Path dir) throws Exception {
        String missing = SshTestbed.missing();
        Testbed.require(missing == null, missing == null ? "" : missing);
        this.bed = SshTestbed.get();
        this.dir = dir;
        this.pids = Files.createDirectories(dir.resolve("pids"));
        this.logs = dir.resolve("runs");
    }

    /** A node line: {@code host} is a testbed host, or any address (for unreachable-host tests). */
    String node(String name, String address, int port, int workers) {
        return "  - {name: " + name + ", host: " + address + ", port: " + port + ", user: root, workers: " + workers
                + ", workdir: " + dir.resolve("work-" + name) + "}\n";
    }

    String node(SshTestbed.Host h, int workers) {
        return node(h.name(), h.address(), h.port(), workers);
    }

    Path job(String name, String nodes, List<Path> files, List<String> command, String extra, Map<String, String> env)
            throws IOException {
        StringBuilder y = new StringBuilder("name: " + name + "\nnodes:\n" + nodes);
        y.append("entrypoint: {command: [").append(String.join(", ", command)).append("]}\n");
        y.append("files: [").append(String.join(", ", files.stream().map(Path::toString).toList())).append("]\n");
        y.append("ssh: {identity: ").append(bed.userKey()).append(", known_hosts: ").append(bed.knownHosts())
                .append(", connect_timeout_s: 3}\n");
        y.append("logs: {dir: ").append(logs).append("}\n");
        y.append(extra);
        y.append("env:\n  PIDDIR: ").append(pids).append("\n");
        env.forEach((k, v) -> y.append("  ").append(k).append(": '").append(v).append("'\n"));
        Path file = dir.resolve(name + ".yaml");
        Files.writeString(file, y.toString());
        return file;
    }

    List<Path> worker(String script) {
        return List.of(WORKERS.resolve("common.py"), WORKERS.resolve(script));
    }

    Cli run(Path job, String... extra) {
        List<String> args = new ArrayList<>(List.of(extra));
        args.add(job.toString());
        return Cli.run(System.getenv(), args.toArray(String[]::new));
    }

    Process start(Path job) throws IOException {
        return RunjobProcess.start(dir, job);
    }

    String stderrOf(Path job) throws IOException {
        return RunjobProcess.stderrOf(dir, job);
    }

    List<Long> awaitPids(int n, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            List<Long> out = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                Path p = pids.resolve("rank-" + r + ".pid");
                try {
                    if (Files.exists(p)) {
                        out.add(Long.parseLong(Files.readString(p).trim()));
                    }
                } catch (IOException | NumberFormatException e) {
                    // being written
                }
            }
            if (out.size() == n) {
                return out;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + n + " pid files, have " + out);
            }
            sleep();
        }
    }

    static void sleep() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) && !zombie(pid);
    }

    static boolean zombie(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
        } catch (IOException e) {
            return false;
        }
    }

    static void awaitGone(List<Long> pids, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (pids.stream().anyMatch(ClusterJobs::alive)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for " + what
                        + "; alive: " + pids.stream().filter(ClusterJobs::alive).toList());
            }
            sleep();
        }
    }
}
