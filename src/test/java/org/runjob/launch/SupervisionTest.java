package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.Leftovers;
import org.runjob.testbed.Pids;
import org.runjob.testbed.Poll;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Fail-fast, process trees, signals and restarts, with real agents, workers and signals. */
class SupervisionTest {

    @TempDir
    Path tmp;

    LocalJobs jobs;
    @RegisterExtension
    final Leftovers toClean = new Leftovers();

    @BeforeEach
    void setUp() throws Exception {
        jobs = new LocalJobs(tmp);
    }


    static JsonNode summary(Path folder) throws Exception {
        return JsonMapper.builder().build().readTree(Files.readString(folder.resolve("summary.json")));
    }

    @Test
    void firstFailureStopsEveryOtherWorkerEvenThoseIgnoringSigterm() throws Exception {
        Path job = jobs.job("failfast", "fail_one.py", 2, 2,
                Map.of("FAIL_RANK", "1", "FAIL_CODE", "3", "FAIL_AFTER_S", "1", "IGNORE_TERM", "1"), 2, 0);
        Cli r = jobs.runInProcess(job);
        List<Long> pids = jobs.awaitPids("rank", 4, Duration.ofSeconds(1));
        toClean.addAll(pids);

        assertThat(r.code()).isEqualTo(1);
        assertThat(Pids.living(pids)).isEmpty();
        assertThat(r.err()).contains("root cause: rank 1 (local rank 1) on node n1: exit 3, pid " + pids.get(1) + "\n"
                + "  last 20 stderr lines:\n  | boom 5 from rank 1\n");
        assertThat(r.err()).contains("  | boom 24 from rank 1\n").doesNotContain("boom 4 from");
        assertThat(r.out()).contains("[n1/1:err] boom 0 from rank 1\n").contains("[n1/1] about to fail\n");

        JsonNode s = summary(jobs.runFolder("failfast"));
        assertThat(s.get("result").stringValue()).isEqualTo("failed");
        assertThat(s.get("exit_code").intValue()).isEqualTo(1);
        JsonNode ranks = s.get("ranks");
        assertThat(ranks.get(1).get("state").stringValue()).isEqualTo("failed");
        assertThat(ranks.get(1).get("outcome").get("exit_code").intValue()).isEqualTo(3);
        Instant failedAt = Instant.parse(ranks.get(1).get("end").stringValue());
        for (int rank : new int[] {0, 2, 3}) {
            JsonNode other = ranks.get(rank);
            assertThat(other.get("state").stringValue()).as("rank %d", rank).isEqualTo("stopped");
            // they ignore SIGTERM: the agent's SIGKILL after the grace period ends them
            assertThat(other.get("outcome").get("signal_name").stringValue()).isEqualTo("SIGKILL");
            Duration stopped = Duration.between(failedAt, Instant.parse(other.get("end").stringValue()));
            assertThat(stopped).as("rank %d gone within grace + 2 s", rank).isLessThan(Duration.ofSeconds(4));
        }
        assertThat(s.get("attempts").get(0).get("root_cause_rank").intValue()).isEqualTo(1);
    }

    @Test
    void grandchildrenAreStoppedWithTheirWorkerEvenOnesInTheirOwnSession() throws Exception {
        Path job = jobs.job("forks", "forker.py", 1, 2, Map.of("FAIL_RANK", "1"), 1, 0);
        Cli r = jobs.runInProcess(job);
        List<Long> all = new ArrayList<>(jobs.awaitPids("rank", 2, Duration.ofSeconds(1)));
        all.addAll(jobs.awaitPids("grandchild", 2, Duration.ofSeconds(1)));
        all.addAll(jobs.awaitPids("escaped", 2, Duration.ofSeconds(1)));
        toClean.addAll(all);
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).contains("root cause: rank 1 (local rank 1) on node n1: exit 5");
        assertThat(Pids.living(all)).isEmpty();
    }

    @Test
    void aMissingProgramFailsPreflightAndNothingStarts() throws Exception {
        Path job = jobs.job("nostart", "sleeper.py", 1, 2, Map.of(), 1, 0);
        Cli r = jobs.runInProcess(job, "--set", "entrypoint.command=[/nonexistent/python9, x.py]");
        assertThat(r.code()).isEqualTo(3);
        assertThat(r.err()).contains("FAIL n1 program: cannot start /nonexistent/python9: no such executable file\n")
                .contains("preflight failed: nothing was started\n");
        try (var pids = Files.list(jobs.pids)) {
            assertThat(pids).isEmpty();
        }
    }

    @Test
    void sigkillOfRunjobLeavesNoWorker() throws Exception {
        Path job = jobs.job("killed", "sleeper.py", 2, 2, Map.of("IGNORE_TERM", "1"), 1, 0);
        Process runjob = jobs.start(job);
        List<Long> pids = jobs.awaitPids("rank", 4, Duration.ofSeconds(30));
        toClean.addAll(pids);
        assertThat(Pids.living(pids)).hasSize(4);
        runjob.destroyForcibly();
        assertThat(runjob.waitFor(10, TimeUnit.SECONDS)).isTrue();
        // the agents see their stdin close: TERM (ignored), then KILL after the 1 s grace period
        Poll.until(() -> Pids.living(pids).isEmpty(), Duration.ofSeconds(1 + 5), "every worker to be gone");
    }

    @Test
    void ctrlCStopsEverythingAndExits130() throws Exception {
        interruptStopsEverythingAndExits130("INT");
    }

    @Test
    void aClosedTerminalSighupStopsEverythingLikeCtrlC() throws Exception {
        interruptStopsEverythingAndExits130("HUP");
    }

    private void interruptStopsEverythingAndExits130(String signal) throws Exception {
        Path job = jobs.job("ctrlc", "sleeper.py", 2, 2, Map.of(), 5, 0);
        Process runjob = jobs.start(job);
        List<Long> pids = jobs.awaitPids("rank", 4, Duration.ofSeconds(30));
        toClean.addAll(pids);
        LocalJobs.signal(runjob, signal);
        assertThat(runjob.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(runjob.exitValue()).isEqualTo(130);
        assertThat(Pids.living(pids)).isEmpty();
        assertThat(jobs.stderrOf(job)).contains("interrupted: every worker was stopped");
        JsonNode s = summary(jobs.runFolder("ctrlc"));
        assertThat(s.get("result").stringValue()).isEqualTo("interrupted");
        assertThat(s.get("exit_code").intValue()).isEqualTo(130);
        for (JsonNode rank : s.get("ranks")) {
            assertThat(rank.get("state").stringValue()).isEqualTo("stopped");
            assertThat(rank.get("outcome").get("signal_name").stringValue()).isEqualTo("SIGTERM");
        }
    }

    @Test
    void aSecondCtrlCKillsAtOnce() throws Exception {
        Path job = jobs.job("ctrlc2", "sleeper.py", 1, 2, Map.of("IGNORE_TERM", "1"), 60, 0);
        Process runjob = jobs.start(job);
        List<Long> pids = jobs.awaitPids("rank", 2, Duration.ofSeconds(30));
        toClean.addAll(pids);
        LocalJobs.signal(runjob, "INT");
        Poll.until(() -> {
            try {
                return jobs.stderrOf(job).contains("interrupted: stopping every worker");
            } catch (IOException e) {
                return false;
            }
        }, Duration.ofSeconds(10), "the first interrupt to be seen");
        LocalJobs.signal(runjob, "INT");
        // the grace period is 60 s: only the second Ctrl-C can end this quickly
        assertThat(runjob.waitFor(15, TimeUnit.SECONDS)).isTrue();
        assertThat(runjob.exitValue()).isEqualTo(130);
        assertThat(Pids.living(pids)).isEmpty();
    }

    @Test
    void aRestartRunsTheWholeGroupAgainWithTheAttemptNumber() throws Exception {
        Path job = jobs.job("flaky", "flaky.py", 1, 2, Map.of(), 1, 1);
        Cli r = jobs.runInProcess(job);
        assertThat(r.code()).isZero();
        // a restart shows in the prefix: [node/rank#attempt]
        assertThat(r.out()).contains("[n1/1] rank 1 attempt 0 restarts 0\n").contains("[n1/0#1] rank 0 attempt 1 restarts 1\n")
                .contains("[n1/1#1] rank 1 attempt 1 restarts 1\n");
        Path folder = jobs.runFolder("flaky");
        assertThat(Files.readString(folder.resolve("rank-1.log"))).isEqualTo("rank 1 attempt 0 restarts 0\n");
        assertThat(Files.readString(folder.resolve("rank-1.attempt-1.log"))).isEqualTo("rank 1 attempt 1 restarts 1\n");
        JsonNode s = summary(folder);
        assertThat(s.get("result").stringValue()).isEqualTo("succeeded");
        assertThat(s.get("attempts").size()).isEqualTo(2);
        assertThat(s.get("attempts").get(0).get("result").stringValue()).isEqualTo("failed");
        assertThat(s.get("attempts").get(0).get("root_cause_rank").intValue()).isEqualTo(1);
        assertThat(r.err()).contains("succeeded after 2 attempts");
    }

    @Test
    void stoppingOneJobLeavesAnotherJobsWorkersAlone() throws Exception {
        LocalJobs jobsB = new LocalJobs(Files.createDirectories(tmp.resolve("b")));
        Path a = jobs.job("joba", "sleeper.py", 1, 2, Map.of(), 2, 0);
        Path b = jobsB.job("jobb", "sleeper.py", 1, 2, Map.of(), 2, 0);
        Process runA = jobs.start(a);
        Process runB = jobsB.start(b);
        List<Long> pidsA = jobs.awaitPids("rank", 2, Duration.ofSeconds(30));
        List<Long> pidsB = jobsB.awaitPids("rank", 2, Duration.ofSeconds(30));
        toClean.addAll(pidsA);
        toClean.addAll(pidsB);
        LocalJobs.signal(runA, "TERM");
        assertThat(runA.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(runA.exitValue()).isEqualTo(130);
        assertThat(Pids.living(pidsA)).isEmpty();
        assertThat(Pids.living(pidsB)).containsExactlyElementsOf(pidsB);
        assertThat(runB.isAlive()).isTrue();
        LocalJobs.signal(runB, "TERM");
        assertThat(runB.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(Pids.living(pidsB)).isEmpty();
    }
}
