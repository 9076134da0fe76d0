package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.Leftovers;
import org.runjob.testbed.Pids;
import org.runjob.testbed.Poll;
import org.runjob.testbed.Testbed;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Hung ranks with real PyTorch (gloo on CPU), jobs/hang.yaml: rank 1 stops at step 3 while rank
 * 0 waits in all_reduce. The hang timeout fails the run with every rank's stacks and names rank
 * 1; a quiet but healthy run is not taken for hung; {@code runjob stacks} reads a detached run's
 * ranks and the run goes on.
 */
@Tag("torch")
class HangTest {

    static final String PYTHON = "/usr/bin/python3";
    static final Pattern PROCESS = Pattern.compile("(?m)^process (\\d+) \\(python3\\), main thread 0x[0-9a-f]{16}$");

    @TempDir
    Path tmp;
    @RegisterExtension
    final Leftovers toClean = new Leftovers();

    @BeforeEach
    void torch() {
        Testbed.require(Testbed.runs(PYTHON, "-c", "import torch.distributed"), "PyTorch for " + PYTHON + " (Debian: python3-torch)");
    }

    Cli runjob(String... args) {
        return Cli.run(System.getenv(), args);
    }

    String[] job(String... sets) {
        List<String> all = new ArrayList<>(List.of("--set", "entrypoint.command=[" + PYTHON + ", train.py]", "--set", "logs.dir=" + tmp.resolve("runs"),
                "--set", "workdir=" + tmp.resolve("work")));
        for (String s : sets) {
            all.addAll(List.of("--set", s));
        }
        return all.toArray(String[]::new);
    }

    Path folder(String id) {
        return tmp.resolve("runs/hang").resolve(id);
    }

    static List<Long> pids(String stackText) {
        List<Long> pids = new ArrayList<>();
        Matcher m = PROCESS.matcher(stackText);
        while (m.find()) {
            pids.add(Long.parseLong(m.group(1)));
        }
        return pids;
    }

    @Test
    void aHungRunFailsWithEveryRanksStacksNamingTheRankThatStoppedAndLeavesNothing() throws Exception {
        // 10 s: above the start-up (two ranks importing torch and meeting) on a busy 2-core machine
        List<String> args = new ArrayList<>(List.of(job("failure.hang_timeout_s=10")));
        args.add("jobs/hang.yaml");
        Cli r = runjob(args.toArray(String[]::new));
        assertThat(r.code()).as(r.err()).isEqualTo(1);
        assertThat(r.out()).contains("[local1/0] rank 0 step 2\n").contains("[local1/1] rank 1 step 2\n").doesNotContain("step 3");
        assertThat(r.err()).contains("root cause: rank 1 (local rank 1) on node local1: hung: no rank wrote output for 10 s, pid ")
                .contains("  each rank's main thread, innermost frame first (every thread of every process in stacks/attempt-0-hang/):\n"
                        + "  | rank 0: all_reduce (distributed_c10d.py:")
                .containsPattern("\n  \\| rank 0: all_reduce \\(distributed_c10d\\.py:\\d+\\) <- train \\(train\\.py:25\\)\n"
                        + "  \\| rank 1: stuck_here \\(train\\.py:17\\)   <- differs from the others\n");
        String id = r.err().replaceFirst("(?s).*runjob: hang run (\\S+):.*", "$1");
        assertThat(Files.readString(folder(id).resolve("runjob.log")))
                .contains("no rank wrote output for 10 s: taking every rank's stacks, then stopping the attempt (failure.hang_timeout_s)\n");
        Path stacks = folder(id).resolve("stacks/attempt-0-hang");
        String rank0 = Files.readString(stacks.resolve("rank-0.txt"));
        String rank1 = Files.readString(stacks.resolve("rank-1.txt"));
        assertThat(rank0).startsWith("[local1/0]\nprocess ").contains("torch/distributed/distributed_c10d.py\", line ")
                .containsPattern("line \\d+ in all_reduce\n  File \"[^\"]*/train.py\", line 25 in train\n");
        assertThat(rank1).startsWith("[local1/1]\nprocess ").contains("/train.py\", line 17 in stuck_here\n")
                .doesNotContain("all_reduce");
        assertThat(Files.readAllLines(stacks.resolve("summary.txt"))).hasSize(2);
        List<Long> pids = new ArrayList<>(pids(rank0));
        pids.addAll(pids(rank1));
        assertThat(pids).hasSize(2);
        toClean.addAll(pids);
        assertThat(Pids.living(pids)).as("nothing is left running").isEmpty();
    }

    @Test
    void aQuietButHealthyRunIsNotTakenForHung() {
        // a line every 4 s under a 10 s timeout: 0.4 of it, as one every 6 s under 15 s
        List<String> args = new ArrayList<>(List.of(job("failure.hang_timeout_s=10", "env.STUCK_STEP=-1", "env.STEPS=3", "env.SLEEP_S=4")));
        args.add("jobs/hang.yaml");
        Cli r = runjob(args.toArray(String[]::new));
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.err()).doesNotContain("hung").doesNotContain("stacks");
        assertThat(r.out().lines().filter(l -> l.matches("\\[local1/[01]] rank [01] step [0-2]"))).hasSize(6);
    }

    @Test
    void stacksOfADetachedRunShowEveryRankAndTheRunGoesOn() throws Exception {
        List<String> args = new ArrayList<>(List.of("--detach"));
        args.addAll(List.of(job("env.STUCK_STEP=-1", "env.STEPS=100000", "env.SLEEP_S=0.3")));
        args.add("jobs/hang.yaml");
        Cli detached = runjob(args.toArray(String[]::new));
        assertThat(detached.code()).as(detached.err()).isZero();
        String id = detached.out().strip();
        String logs = tmp.resolve("runs").toString();
        Path rank0 = folder(id).resolve("rank-0.log");
        try {
            Poll.until(() -> read(rank0).contains("rank 0 step 1\n"), Duration.ofSeconds(60), "rank 0 to train");
            Cli stacks = runjob("stacks", id, "--logs-dir", logs);
            assertThat(stacks.code()).as(stacks.err()).isZero();
            String out = stacks.out();
            assertThat(out).startsWith("[local1/0]\nprocess ").contains("\n[local1/1]\nprocess ")
                    .containsPattern("/train.py\", line \\d+ in train\n")
                    .contains("each rank's main thread, innermost frame first:\n  rank 0: ").contains("\n  rank 1: ")
                    .contains("saved in " + folder(id).resolve("stacks").resolve("request-"));
            List<Long> pids = pids(out);
            assertThat(pids).hasSize(2);
            toClean.addAll(pids);
            // the run goes on: both ranks live and keep training
            String before = read(rank0);
            Poll.until(() -> read(rank0).length() > before.length() + 30, Duration.ofSeconds(30), "rank 0 to go on training");
            assertThat(Pids.living(pids)).hasSize(2);

            Cli one = runjob("stacks", id, "--ranks", "1", "--logs-dir", logs);
            assertThat(one.code()).as(one.err()).isZero();
            assertThat(one.out()).startsWith("[local1/1]\nprocess ").doesNotContain("[local1/0]").doesNotContain("  rank 0: ");
            Cli json = runjob("stacks", id, "-o", "json", "--logs-dir", logs);
            assertThat(json.code()).as(json.err()).isZero();
            JsonNode tree = JsonMapper.builder().build().readTree(json.out());
            assertThat(tree.get("ranks").valueStream().map(k -> k.get("rank").intValue() + "@" + k.get("node").stringValue()))
                    .containsExactly("0@local1", "1@local1");
            assertThat(tree.get("ranks").get(1).get("stacks").stringValue()).startsWith("process ").contains("/train.py\", line ");
            assertThat(tree.get("summary").valueStream().map(JsonNode::stringValue)).hasSize(2).allMatch(l -> l.matches("rank [01]: .*"));
            assertThat(tree.get("folder").stringValue()).startsWith(folder(id).resolve("stacks").resolve("request-").toString());
            Cli nativeFrames = runjob("stacks", id, "--ranks", "0", "--native", "--logs-dir", logs);
            assertThat(nativeFrames.code()).as(nativeFrames.err()).isZero();
            assertThat(nativeFrames.out()).startsWith("[local1/0]\nprocess ").contains(Testbed.runs("py-spy", "--version")
                    ? "py-spy dump --native (native frames too):\n" : "\n(no native frames: py-spy is not on this node's PATH)\n");
        } finally {
            Cli stop = runjob("stop", id, "--logs-dir", logs);
            assertThat(stop.code()).as(stop.err()).isZero();
        }
        Cli after = runjob("stacks", id, "--logs-dir", logs);
        assertThat(after.code()).isEqualTo(2);
        assertThat(after.err()).isEqualTo("runjob: run " + id + " is not running (interrupted): it has no stacks to take\n");
    }

    /** The file's text, or "" while it does not exist. */
    static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
