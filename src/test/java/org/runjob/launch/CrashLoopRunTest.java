package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.Leftovers;
import org.runjob.testbed.Pids;

import tools.jackson.databind.JsonNode;

/** A crash loop ends the restarts; a failure worth a restart does not, with real agents and workers. */
class CrashLoopRunTest {

    @TempDir
    Path tmp;

    LocalJobs jobs;
    @RegisterExtension
    final Leftovers toClean = new Leftovers();

    @BeforeEach
    void setUp() throws Exception {
        jobs = new LocalJobs(tmp);
    }

    @Test
    void theSameStartUpFailureTwiceEndsTheRestarts() throws Exception {
        Path job = jobs.job("loop", "crashing.py", 2, 1, Map.of(), 1, 5);
        Cli r = jobs.runInProcess(job);
        assertThat(r.code()).as(r.err()).isEqualTo(1);
        JsonNode s = SupervisionTest.summary(jobs.runFolder("loop"));
        assertThat(s.get("attempts").size()).isEqualTo(2);
        assertThat(s.get("crash_loop").stringValue()).matches("crash loop: rank 0 failed the same way in attempts 0 and 1, "
                + "[0-9]+\\.[0-9] s and [0-9]+\\.[0-9] s after their start \\(exit 1: ModuleNotFoundError: No module named "
                + "'nosuchmodule_of_runjobs_tests'\\): no more restarts \\(failure\\.crash_loop_s: 0 restarts anyway; "
                + "failure\\.retry_exit_codes lists exit codes always worth one\\)");
        assertThat(r.err()).contains("\n" + s.get("crash_loop").stringValue() + "\n").contains("failed after 2 attempts");
        // two attempts that failed at start-up trained nothing: no goodput, and the summary says what it counts
        assertThat(s.get("goodput").asDouble()).isZero();
        assertThat(s.get("goodput_basis").asString()).isEqualTo("running");
        assertThat(r.err()).contains(", 0% of it running; logs in ");
        assertThat(Files.readString(jobs.runFolder("loop").resolve("runjob.log")))
                .contains("attempt 1 failed as attempt 0 did, soon after its start: a crash loop, no restart");
        // rank 1 of each attempt was up and sleeping: the run's end stopped it
        assertThat(pids()).hasSize(2);
        assertThat(Pids.living(pids())).isEmpty();
    }

    /** Eight ranks, a different one failing first each attempt, the same way: the loop is found after two attempts, not six. */
    @Test
    void eightRanksFailingAlikeWithAnotherFirstRankEachAttemptAreALoop() throws Exception {
        Path job = jobs.job("rotate", "crashing.py", 2, 4, Map.of("CRASH_RANK", "rotate"), 1, 5);
        Cli r = jobs.runInProcess(job);
        assertThat(r.code()).as(r.err()).isEqualTo(1);
        JsonNode s = SupervisionTest.summary(jobs.runFolder("rotate"));
        assertThat(s.get("attempts").size()).isEqualTo(2);
        assertThat(s.get("crash_loop").stringValue()).matches("crash loop: rank 1 \\(attempt 0\\) and rank 4 \\(attempt 1\\) failed the same"
                + " way in attempts 0 and 1, [0-9]+\\.[0-9] s and [0-9]+\\.[0-9] s after their start \\(exit 1: ModuleNotFoundError: No"
                + " module named 'nosuchmodule_of_runjobs_tests'\\): no more restarts .*");
    }

    private List<Long> pids() throws Exception {
        try (Stream<Path> files = Files.list(jobs.pids)) {
            return files.filter(f -> f.getFileName().toString().matches("rank-1\\.attempt-[0-9]+\\.pid"))
                    .map(f -> Long.parseLong(read(f).strip())).toList();
        }
    }

    private static String read(Path f) {
        try {
            return Files.readString(f);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void aRetryExitCodeOrTheGuardTurnedOffUsesEveryRestart() throws Exception {
        // the pid in the last line differs between attempts: the digits are not what tells failures apart
        Path job = jobs.job("retry", "crashing.py", 2, 1, Map.of("CRASH_EXIT", "75"), 1, 2);
        Cli looped = jobs.runInProcess(job);
        assertThat(looped.code()).isEqualTo(1);
        assertThat(SupervisionTest.summary(jobs.runFolder("retry")).get("attempts").size()).isEqualTo(2);
        for (String set : new String[] {"failure.retry_exit_codes=[75]", "failure.crash_loop_s=0"}) {
            Path again = Files.writeString(tmp.resolve("again.yaml"), Files.readString(job).replace("name: retry", "name: retry-" + set.length()));
            Cli r = jobs.runInProcess(again, "--set", set);
            assertThat(r.code()).as(r.err()).isEqualTo(1);
            JsonNode s = SupervisionTest.summary(jobs.runFolder("retry-" + set.length()));
            assertThat(s.get("attempts").size()).as(set).isEqualTo(3);
            assertThat(s.has("crash_loop")).isFalse();
            assertThat(r.err()).contains("failed after 3 attempts");
        }
    }

    @Test
    void anotherFailureEachAttemptIsNoLoop() throws Exception {
        Path job = jobs.job("varied", "crashing.py", 1, 2, Map.of("CRASH_EXIT", "attempt"), 1, 2);
        Cli r = jobs.runInProcess(job);
        assertThat(r.code()).isEqualTo(1);
        JsonNode s = SupervisionTest.summary(jobs.runFolder("varied"));
        assertThat(s.get("attempts").size()).isEqualTo(3);
        assertThat(s.has("crash_loop")).isFalse();
        assertThat(r.err()).contains("exit 12");
    }
}
