package org.runjob.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.distribute.Sha256;
import org.runjob.testbed.OnSshTestbed;
import org.runjob.testbed.Poll;
import org.runjob.testbed.SshTestbed;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Relay distribution on real sshd hosts: h1 and h2 already hold the job's files (kept by the quick
 * check) and serve them; h3, whose login runs a slow rc file and so comes last, lacks them and gets
 * them from a peer over TCP, verified by SHA-256.
 */
@OnSshTestbed
class RelayTest {

    static final int SIZE = 3 << 20;

    @TempDir
    Path tmp;

    ClusterJobs jobs;
    Path data;
    String sha;

    @BeforeEach
    void setUp() throws Exception {
        jobs = new ClusterJobs(tmp);
        data = tmp.resolve("src/data.bin");
        Files.createDirectories(data.getParent());
        write(data, SIZE);
    }

    /** {@code size} bytes of a fixed pattern into {@code file}, with a fixed modification time; {@link #sha} becomes its hash. */
    void write(Path file, int size) throws Exception {
        byte[] b = new byte[size];
        for (int i = 0; i < size; i++) {
            b[i] = (byte) (i * 7 + (i >> 10));
        }
        Files.write(file, b);
        Files.setLastModifiedTime(file, FileTime.fromMillis(1_700_000_000_000L));
        sha = Sha256.of(file);
    }

    /** What a workdir holds, less its .runjob directory (a partial file would show as NAME.runjob-PID-RANDOM). */
    List<String> filesIn(Path workdir) throws Exception {
        try (var left = Files.list(workdir)) {
            return left.map(p -> p.getFileName().toString()).filter(n -> !n.equals(".runjob")).sorted().toList();
        }
    }

    String stderrOf(Path job) {
        try {
            return jobs.stderrOf(job);
        } catch (IOException e) {
            return "";
        }
    }

    /** This test's agents on any node (every namespace shares this machine's process table). */
    List<ProcessHandle> agents() {
        return ProcessHandle.allProcesses().filter(h -> {
            String cmd = h.info().commandLine().orElse("");
            return cmd.contains("org.runjob.agent.AgentMain agent") && cmd.contains(tmp.toString());
        }).toList();
    }

    /** Puts {@code bytes} into a node's workdir as data.bin, with the source's size and modification time (the quick check keeps it). */
    void seed(String node, byte[] bytes) throws Exception {
        Path dest = Files.createDirectories(tmp.resolve("work-" + node)).resolve("data.bin");
        Files.write(dest, bytes);
        Files.setPosixFilePermissions(dest, Files.getPosixFilePermissions(data));
        Files.setLastModifiedTime(dest, Files.getLastModifiedTime(data));
    }

    Path job(String name) throws Exception {
        SshTestbed bed = jobs.bed;
        return jobs.job(name, jobs.node(bed.host(1), 1) + jobs.node(bed.host(2), 1) + jobs.node(bed.host(3), 1),
                List.of(data), List.of("sha256sum", "data.bin"), SHARED, Map.of());
    }

    /** One directory for every run, so what a test leaves on a node (or takes away) is what the next run finds. */
    static final String SHARED = "relay: always\nruns_share_workdir: true\n";

    /** h3's run folder file. */
    JsonNode summary(Path logs, String job) throws Exception {
        try (var runs = Files.list(logs.resolve(job))) {
            return JsonMapper.builder().build().readTree(Files.readString(runs.findFirst().orElseThrow().resolve("summary.json")));
        }
    }

    /**
     * Runs {@code job} until h3 took the path under test (at most 3 times: h3 comes last only
     * because its login is slower), each time with h3's workdir emptied; the last run's result.
     */
    Cli runUntil(Path job, Pattern wanted, String[] logs) throws Exception {
        Cli cli = null;
        for (int attempt = 1; attempt <= 3; attempt++) {
            Files.deleteIfExists(tmp.resolve("work-h3/data.bin"));
            logs[0] = tmp.resolve("runs-" + attempt).toString();
            cli = jobs.run(job, "--set", "logs.dir=" + logs[0]);
            if (wanted.matcher(cli.err()).find()) {
                return cli;
            }
        }
        throw new AssertionError("h3 never took the path under test in 3 runs; last stderr:\n" + cli.err());
    }

    @Test
    void aNodeThatLacksTheFilesGetsThemFromAPeerAndEveryWorkerReadsTheSameBytes() throws Exception {
        byte[] bytes = Files.readAllBytes(data);
        seed("h1", bytes);
        seed("h2", bytes);
        String[] logs = new String[1];
        Cli cli = runUntil(job("relay"), Pattern.compile("h3: shipping 3 MiB from h[12]"), logs);
        assertThat(cli.code()).as(cli.err()).isZero();
        Matcher from = Pattern.compile("h3: shipping 3 MiB from (h[12])").matcher(cli.err());
        assertThat(from.find()).isTrue();
        String peer = from.group(1);
        assertThat(SshClusterTest.detail(Path.of(logs[0]), "relay", "h3", "workdir")).isEqualTo("1 sent (3 MiB) by " + peer + ", 0 kept");
        assertThat(SshClusterTest.detail(Path.of(logs[0]), "relay", "h1", "workdir")).isEqualTo("0 sent (0 B), 1 kept");
        JsonNode h3 = summary(Path.of(logs[0]), "relay").get("distribution").get("h3");
        assertThat(h3.get("relayed_by").stringValue()).isEqualTo(peer);
        assertThat(h3.get("bytes_sent").longValue()).isEqualTo(SIZE);
        assertThat(summary(Path.of(logs[0]), "relay").get("distribution").get("h1").has("relayed_by")).isFalse();
        Path arrived = tmp.resolve("work-h3/data.bin");
        assertThat(Sha256.of(arrived)).isEqualTo(sha);
        assertThat(Files.getPosixFilePermissions(arrived)).isEqualTo(Files.getPosixFilePermissions(data));
        assertThat(Files.getLastModifiedTime(arrived)).isEqualTo(Files.getLastModifiedTime(data));
        assertThat(filesIn(tmp.resolve("work-h3"))).containsExactly("data.bin");
        for (String w : List.of("[h1/0] ", "[h2/1] ", "[h3/2] ")) {
            assertThat(cli.out()).contains(w + sha + "  data.bin");
        }
    }

    @Test
    void bytesChangedOnTheNodesAreFoundByContentAndEveryWorkerReadsTheRightOnes() throws Exception {
        byte[] tampered = Files.readAllBytes(data);
        tampered[SIZE / 2] ^= 0x55;
        // same size and time: rsync's quick check would keep these, and a peer would serve them; runjob checks the
        // content, so no node keeps them (a peer that changes bytes while it serves them: FileRelayTest)
        seed("h1", tampered);
        seed("h2", tampered);
        Path logs = tmp.resolve("runs-tampered");
        Cli cli = jobs.run(job("tampered"), "--set", "logs.dir=" + logs);
        assertThat(cli.code()).as(cli.err()).isZero();
        for (String node : List.of("h1", "h2")) {
            assertThat(SshClusterTest.detail(logs, "tampered", node, "workdir")).as(node).matches("1 sent \\(3 MiB\\)( by h\\d)?, 0 kept");
            assertThat(Sha256.of(tmp.resolve("work-" + node + "/data.bin"))).as(node).isEqualTo(sha);
        }
        for (String w : List.of("[h1/0] ", "[h2/1] ", "[h3/2] ")) {
            assertThat(cli.out()).contains(w + sha + "  data.bin");
        }
    }

    @Test
    void nodesThatShareAWorkdirGetTheFilesOnceAndServeThem() throws Exception {
        SshTestbed bed = jobs.bed;
        Path shared = tmp.resolve("work-shared");
        String nodes = jobs.node(bed.host(1), 1).replace(tmp.resolve("work-h1").toString(), shared.toString())
                + jobs.node(bed.host(2), 1).replace(tmp.resolve("work-h2").toString(), shared.toString())
                + jobs.node(bed.host(3), 1);
        Path job = jobs.job("shared", nodes, List.of(data), List.of("sha256sum", "data.bin"), SHARED, Map.of());
        Cli cli = jobs.run(job);
        assertThat(cli.code()).as(cli.err()).isZero();
        Path logs = tmp.resolve("runs");
        List<String> cells = List.of(SshClusterTest.detail(logs, "shared", "h1", "workdir"), SshClusterTest.detail(logs, "shared", "h2", "workdir"));
        // whichever of h1 and h2 was ready first got the file; the other found it there
        String sender = cells.stream().filter(c -> c.startsWith("1 sent")).findFirst()
                .orElseThrow(() -> new AssertionError("no cell of h1 and h2 says it got the file: " + cells));
        assertThat(cells).containsExactlyInAnyOrder(sender, "workdir shared by h1, h2: shipped once");
        assertThat(sender).matches("1 sent \\(3 MiB\\)( by h3)?, 0 kept; workdir shared by h1, h2: shipped once");
        assertThat(SshClusterTest.detail(logs, "shared", "h3", "workdir")).matches("1 sent \\(3 MiB\\)( by h[12])?, 0 kept");
        for (String w : List.of("[h1/0] ", "[h2/1] ", "[h3/2] ")) {
            assertThat(cli.out()).contains(w + sha + "  data.bin");
        }
        assertThat(filesIn(shared)).containsExactly("data.bin");
        assertThat(filesIn(tmp.resolve("work-h3"))).containsExactly("data.bin");
    }

    @Test
    void killingRunjobDuringATransferLeavesNoAgentAndNoPartialFileOnAnyNode() throws Exception {
        write(data, 256 << 20);
        byte[] bytes = Files.readAllBytes(data);
        seed("h1", bytes);
        seed("h2", bytes);
        Path job = job("killed");
        // h3 gets the file from a peer or, when it is ready before they serve, from runjob: either transfer is cut
        Process runjob = jobs.start(job);
        try {
            Poll.until(() -> stderrOf(job).contains("h3: shipping"), Duration.ofSeconds(60), "h3's transfer to start");
        } finally {
            runjob.destroyForcibly();
        }
        assertThat(runjob.waitFor(10, TimeUnit.SECONDS)).isTrue();
        // sshd closes each agent's stdin: a serving agent stops serving, the fetching one breaks off and removes its
        // partial file, and all of them exit
        Poll.until(() -> agents().isEmpty(), Duration.ofSeconds(20), "every agent of the run to exit");
        List<String> left = filesIn(tmp.resolve("work-h3"));
        assertThat(left).as("no partial file").noneMatch(n -> n.contains(".runjob-"));
        if (!left.isEmpty()) {
            // the whole file arrived before the kill
            assertThat(left).containsExactly("data.bin");
            assertThat(Sha256.of(tmp.resolve("work-h3/data.bin"))).isEqualTo(sha);
        }
        assertThat(filesIn(tmp.resolve("work-h1"))).containsExactly("data.bin");
    }
}
