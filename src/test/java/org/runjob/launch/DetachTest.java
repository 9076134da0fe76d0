package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.Leftovers;
import org.runjob.testbed.Pids;
import org.runjob.testbed.Poll;
import org.runjob.testbed.RunjobJvm;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Detached runs and the commands that reach them: runs, status, logs -f, stop; a killed runjob shows as dead. */
class DetachTest {

    @TempDir
    Path tmp;

    LocalJobs jobs;
    @RegisterExtension
    final Leftovers toClean = new Leftovers();

    @BeforeEach
    void setUp() throws Exception {
        jobs = new LocalJobs(tmp);
    }


    /**
     * runjob with this JVM's environment and a run index of this test's own: every in-process run
     * has the same id ({@link Cli#RUN_ID}), and a class on the other test stream may record it too.
     */
    Cli cli(String... args) {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("XDG_STATE_HOME", tmp.resolve("state").toString());
        return Cli.run(env, args);
    }

    String logDirText() {
        return jobs.logs.toString();
    }

    String logsDir() {
        return jobs.logs.toString();
    }

    @Test
    void aDetachedRunIsListedShownFollowedToItsEnd() throws Exception {
        Path job = jobs.job("ticker", "ticks.py", 1, 2, Map.of("TICKS", "30"), 1, 0);
        Cli detached = cli("--detach", job.toString());
        assertThat(detached.code()).as(detached.err()).isZero();
        String id = detached.out().strip();
        assertThat(id).matches("\\d{8}-\\d{6}-[0-9a-f]{4}");
        assertThat(detached.err()).contains("runjob: run " + id + " is detached").contains("  follow it:  runjob logs -f " + id
                + " --logs-dir " + logsDir() + "\n");
        // it returned while the workers run: they are up, and not children of this JVM
        List<Long> pids = jobs.awaitPids("rank", 2, Duration.ofSeconds(10));
        toClean.addAll(pids);

        Cli runs = cli("runs", "--logs-dir", logsDir());
        assertThat(runs.out()).containsPattern(id + " +ticker +running ");
        Poll.until(() -> cli("status", id.substring(0, 15), "--logs-dir", logDirText()).out()
                .matches("(?s)run " + id + " of job ticker: running, attempt 0, runjob pid .*n1 +0  running +\\d+ .*n1 +1  running +\\d+ .*"),
                Duration.ofSeconds(10), "status to show both ranks running");

        Cli logs = CompletableFuture.supplyAsync(() -> cli("logs", "-f", "last", "--logs-dir", logsDir())).get(60, TimeUnit.SECONDS);
        assertThat(logs.code()).isZero();
        // runjob's own lines too: the run's report
        assertThat(logs.out()).contains("runjob: ticker run " + id + ": 2 workers on 1 node").contains("succeeded");
        for (int rank = 0; rank < 2; rank++) {
            int r = rank;
            List<String> lines = logs.out().lines().filter(l -> l.startsWith("[n1/" + r + "] ")).toList();
            assertThat(lines).containsExactlyElementsOf(IntStream.rangeClosed(1, 30).mapToObj(i -> "[n1/" + r + "] rank " + r + " tick " + i).toList());
        }
        // logs -f ended because the run did
        JsonNode summary = summary("ticker", id);
        assertThat(summary.get("result").stringValue()).isEqualTo("succeeded");
        assertThat(cli("runs", "--logs-dir", logsDir()).out()).containsPattern(id + " +ticker +succeeded .* 0  ");
        assertThat(cli("logs", id, "--ranks", "1", "--logs-dir", logsDir()).out().lines().count()).isEqualTo(30);
        // from any directory (this JVM's is not the logs dir's parent): the run index has it
        assertThat(cli("runs").out()).containsPattern(id + " +ticker +succeeded ");
        assertThat(cli("status", id).out()).startsWith("run " + id + " of job ticker: succeeded (exit 0)");
    }

    @Test
    void logsFollowExitsWithTheRunsExitCodeAndARefusedRunLeavesNoRun() throws Exception {
        Path failing = jobs.job("failing", "fail_one.py", 1, 2, Map.of("FAIL_RANK", "1", "FAIL_CODE", "3", "FAIL_AFTER_S", "0.2"), 0.5, 0);
        String id = cli("--detach", failing.toString()).out().strip();
        toClean.addAll(jobs.awaitPids("rank", 2, Duration.ofSeconds(10)));
        Cli logs = CompletableFuture.supplyAsync(() -> cli("logs", "-f", id, "--logs-dir", logsDir())).get(60, TimeUnit.SECONDS);
        assertThat(logs.code()).isEqualTo(1);
        assertThat(summary("failing", id).get("exit_code").intValue()).isEqualTo(1);

        Path refused = jobs.job("refused", "ticks.py", 1, 2, Map.of(), 1, 0);
        Cli r = cli(refused.toString(), "--ranks", "9");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("--ranks");
        assertThat(jobs.logs.resolve("refused")).satisfiesAnyOf(p -> assertThat(p).doesNotExist(), p -> assertThat(p).isEmptyDirectory());
        assertThat(cli("runs", "--logs-dir", logsDir()).out()).doesNotContain("refused");
    }

    @Test
    void statusShowsLastLinesMarksTheSilentRankAndWatchEndsWithTheRun() throws Exception {
        Path job = jobs.job("quiet", "quiet.py", 1, 2, Map.of(), 1, 0);
        String id = cli("--detach", job.toString()).out().strip();
        List<Long> pids = jobs.awaitPids("rank", 2, Duration.ofSeconds(10));
        toClean.addAll(pids);
        // rank 0 printed once; rank 1 prints every 0.2 s: after 10 s and more rank 0 is the silent one
        Poll.until(() -> Cli.runNow(System.getenv(), "status", id, "--logs-dir", logsDir()).out().matches("(?s).*\nn1 +0  running +\\d+  1[2-9] s ago \\*.*"),
                Duration.ofSeconds(30), "rank 0 to be marked silent for 12 s and more");
        String status = Cli.runNow(System.getenv(), "status", id, "--logs-dir", logsDir()).out();
        // each rank's pid on its node: the one its worker wrote (kill -9 of exactly one worker needs no pgrep)
        assertThat(status).containsPattern("\nn1 +0  running +" + pids.get(0) + "  1[2-9] s ago \\* +rank 0 said this once, and then a long tail t\\.\\.\\.\\n")
                .containsPattern("\nn1 +1  running +" + pids.get(1) + "  [01] s ago +rank 1 tick \\d+\\n")
                .contains("\n* silent far longer than the other ranks: runjob stacks " + id + " shows where every rank is\n");
        JsonNode json = JsonMapper.builder().build().readTree(Cli.runNow(System.getenv(), "status", id, "--logs-dir", logsDir(), "-o", "json").out());
        assertThat(json.get("ranks").get(0).get("last_line").stringValue()).isEqualTo("rank 0 said this once, and then a long tail t...");
        assertThat(json.get("ranks").get(0).get("silent").booleanValue()).as(json.toString()).isTrue();
        assertThat(json.get("ranks").get(1).get("silent").booleanValue()).isFalse();
        assertThat(json.get("ranks").get(0).get("last_output").stringValue()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
        assertThat(json.get("ranks").get(1).get("pid").longValue()).isEqualTo(pids.get(1));

        var watch = CompletableFuture.supplyAsync(() -> Cli.runNow(System.getenv(), "status", id, "--logs-dir", logsDir(), "--watch", "1"));
        assertThat(cli("stop", id, "--logs-dir", logsDir()).code()).isZero();
        Cli watched = watch.get(30, TimeUnit.SECONDS);
        assertThat(watched.code()).isZero();
        // it redrew until the run ended, and showed the end
        assertThat(watched.out()).startsWith("run " + id + " of job quiet: ")
                .containsPattern("(^|\n\n)run " + id + " of job quiet: interrupted \\(exit 130\\), attempt 0, runjob pid \\d+ on \\S+ \\(gone\\)\\n[^\\n]*\\n"
                        + "n1 +0  stopped [^\\n]*\\nn1 +1  stopped [^\\n]*\\nfolder [^\\n]+\\nworkdir [^\\n]+ \\(on node n1\\)\\n$");
    }

    @Test
    void stopEndsADetachedRunLikeCtrlCAndAKilledRunjobShowsAsDead() throws Exception {
        Path job = jobs.job("held", "sleeper.py", 1, 2, Map.of(), 1, 0);
        String id = cli("--detach", job.toString()).out().strip();
        List<Long> pids = jobs.awaitPids("rank", 2, Duration.ofSeconds(10));
        toClean.addAll(pids);
        Cli stop = cli("stop", id, "--logs-dir", logsDir());
        assertThat(stop.code()).as(stop.err()).isZero();
        assertThat(stop.err()).isEqualTo("runjob: run " + id + " interrupted (exit 130)\n");
        assertThat(Pids.living(pids)).isEmpty();
        assertThat(summary("held", id).get("exit_code").intValue()).isEqualTo(130);

        Files.walk(jobs.pids).filter(Files::isRegularFile).forEach(p -> p.toFile().delete());
        // another job: the in-process CLI's clock is fixed, so a second run of the same job would reuse the run id
        Path other = jobs.job("killed", "sleeper.py", 1, 2, Map.of(), 1, 0);
        String second = cli("--detach", other.toString()).out().strip();
        List<Long> more = jobs.awaitPids("rank", 2, Duration.ofSeconds(10));
        toClean.addAll(more);
        long coordinator = JsonMapper.builder().build().readTree(Files.readString(folder("killed", second).resolve("status.json")))
                .get("coordinator").get("pid").longValue();
        ProcessHandle.of(coordinator).orElseThrow().destroyForcibly();
        Poll.until(() -> cli("runs", "--logs-dir", logsDir()).out().matches("(?s).*" + second + " +killed +dead .*"), Duration.ofSeconds(10),
                "the killed run to show as dead");
        // its agents saw their stdin close and stopped the workers
        Pids.awaitGone(more, Duration.ofSeconds(1 + 5), "the workers of the killed run");
        // both runs have the fixed clock's id: a bare id is ambiguous, JOB/ID is not
        assertThat(cli("stop", second, "--logs-dir", logsDir()).err()).isEqualTo("runjob: " + second + " names 2 runs; give more of the id,"
                + " or JOB/ID:\n  killed/" + second + "\n  held/" + second + "\n");
        assertThat(cli("stop", "killed/" + second, "--logs-dir", logsDir()).err()).isEqualTo("runjob: run " + second + " is not running (dead)\n");
    }

    /** runjob ARGS as its own JVM, its stdout a pipe read here line by line into {@code lines}, its stderr to a file. */
    private Process runjob(List<String> lines, String... args) throws Exception {
        List<String> cmd = RunjobJvm.command(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectError(Files.createTempFile(tmp, "err-", ".txt").toFile()).start();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // the process ended
            }
        });
        reader.setDaemon(true);
        reader.start();
        return p;
    }

    @Test
    void logsFollowPrintsEachLineAsItComesAndSignalsEndItAndStatusWatch() throws Exception {
        Path job = jobs.job("following", "ticks.py", 1, 1, Map.of("TICKS", "3000"), 1, 0);
        Cli detached = cli("--detach", job.toString());
        assertThat(detached.code()).as(detached.err()).isZero();
        String id = detached.out().strip();
        toClean.addAll(jobs.awaitPids("rank", 1, Duration.ofSeconds(10)));

        List<String> followed = new CopyOnWriteArrayList<>();
        Process logs = runjob(followed, "logs", "-f", id, "--logs-dir", logsDir());
        toClean.add(logs.pid());
        // on a pipe, while the run goes on (it ticks for 300 s): the lines come as they are written
        Poll.until(() -> followed.stream().anyMatch(l -> l.equals("[n1/0] rank 0 tick 5")), Duration.ofSeconds(20),
                "logs -f to print rank 0's 5th tick while the run runs");
        new ProcessBuilder("kill", "-INT", Long.toString(logs.pid())).start().waitFor();
        assertThat(logs.waitFor(10, TimeUnit.SECONDS)).as("logs -f ends on SIGINT").isTrue();
        assertThat(logs.exitValue()).isEqualTo(130);

        List<String> watched = new CopyOnWriteArrayList<>();
        Process status = runjob(watched, "status", id, "--watch", "1", "--logs-dir", logsDir());
        toClean.add(status.pid());
        Poll.until(() -> watched.stream().anyMatch(l -> l.startsWith("run " + id + " of job following: running")), Duration.ofSeconds(20),
                "status --watch to show the run");
        new ProcessBuilder("kill", "-TERM", Long.toString(status.pid())).start().waitFor();
        assertThat(status.waitFor(10, TimeUnit.SECONDS)).as("status --watch ends on SIGTERM").isTrue();
        assertThat(status.exitValue()).isEqualTo(130);

        assertThat(cli("stop", id, "--logs-dir", logsDir()).code()).isZero();
        Poll.until(() -> cli("status", id, "--logs-dir", logsDir()).out().contains(": interrupted"), Duration.ofSeconds(20),
                "the run to end interrupted");
    }

    /** The folder of the run {@code id} of job {@code job}. */
    Path folder(String job, String id) {
        return jobs.logs.resolve(job).resolve(id);
    }

    JsonNode summary(String job, String id) throws Exception {
        return JsonMapper.builder().build().readTree(Files.readString(folder(job, id).resolve("summary.json")));
    }
}
