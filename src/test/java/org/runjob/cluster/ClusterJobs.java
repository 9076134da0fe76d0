package org.runjob.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.runjob.cli.Cli;
import org.runjob.testbed.Pids;
import org.runjob.testbed.RunjobProcess;
import org.runjob.testbed.SlurmTestbed;
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
        this(dir, shared());
    }

    /**
     * Jobs for the SSH hosts of the Slurm cluster ({@link SlurmTestbed#hosts}): a class that needs
     * only SSH hosts runs there, in the Slurm cluster's stream, to even out the streams' lengths.
     */
    static ClusterJobs onSlurmHosts(Path dir) throws Exception {
        String missing = SlurmTestbed.missing();
        Testbed.require(missing == null, missing == null ? "" : missing);
        return new ClusterJobs(dir, SlurmTestbed.get().hosts());
    }

    /** Jobs for the hosts of {@code bed}. */
    ClusterJobs(Path dir, SshTestbed bed) throws IOException {
        this.bed = bed;
        this.dir = dir;
        this.pids = Files.createDirectories(dir.resolve("pids"));
        this.logs = dir.resolve("runs");
    }

    private static SshTestbed shared() throws Exception {
        String missing = SshTestbed.missing();
        Testbed.require(missing == null, missing == null ? "" : missing);
        return SshTestbed.get();
    }

    /** The step steps.py last saved for {@code rank} in {@code ckpt}; 0 before its first. */
    static int savedStep(Path ckpt, int rank) {
        try {
            return Integer.parseInt(Files.readString(ckpt.resolve("rank-" + rank)).trim());
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
    }

    /** Every host's link up again (after a test that cut one). */
    void reconnectAll() throws IOException, InterruptedException {
        for (SshTestbed.Host h : bed.hosts()) {
            bed.link(h, true);
        }
    }

    /** A node line: {@code host} is a testbed host, or any address (for unreachable-host tests). */
    String node(String name, String address, int port, int workers) {
        return "  - {name: " + name + ", host: " + address + ", port: " + port + ", user: root, workers: " + workers
                + ", workdir: " + dir.resolve("work-" + name) + "}\n";
    }

    String node(SshTestbed.Host h, int workers) {
        return node(h.name(), h.address(), h.port(), workers);
    }

    /** A node that uses every GPU the stand-in driver gives it. */
    String gpuNode(SshTestbed.Host h) {
        return "  - {name: " + h.name() + ", host: " + h.address() + ", port: " + h.port() + ", user: root, gpus: all"
                + ", workdir: " + dir.resolve("work-" + h.name()) + "}\n";
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
        return Cli.job(job, extra);
    }

    Process start(Path job) throws IOException {
        return RunjobProcess.start(dir, job);
    }

    String stderrOf(Path job) throws IOException {
        return RunjobProcess.stderrOf(dir, job);
    }

    List<Long> awaitPids(int n, Duration timeout) {
        return Pids.await(pids, "rank", n, timeout);
    }

    /** rank to "NODE ROW" from "[h1/0] rank 0 trained on row 0.1". */
    static Map<Integer, String> trained(String out) {
        Map<Integer, String> ranks = new TreeMap<>();
        Matcher m = Pattern.compile("(?m)^\\[(h\\d)/(\\d)] rank (\\d) trained on row (0\\.\\d)$").matcher(out);
        while (m.find()) {
            assertThat(m.group(2)).isEqualTo(m.group(3));
            ranks.put(Integer.parseInt(m.group(3)), m.group(1) + " " + m.group(4));
        }
        return ranks;
    }

    /** Each rank's weights line after DDP training, in order. */
    static List<String> weights(String out) {
        return out.lines().filter(l -> l.matches("\\[h\\d/\\d] rank \\d weights .*")).map(l -> l.replaceFirst(".* weights ", "")).toList();
    }
}
