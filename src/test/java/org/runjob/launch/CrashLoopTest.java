package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.runjob.spec.JobSpec;

class CrashLoopTest {

    private static final Instant T0 = Instant.parse("2026-12-04T07:00:00Z");
    private static final JobSpec.FailureSpec DEFAULTS = new JobSpec.FailureSpec(10, 5);

    /** Attempt {@code n} starting at T0 + 100 n s, its root cause {@code rank} ending {@code after} s in. */
    private static AttemptResult attempt(int n, int rank, Outcome outcome, double after, String... stderr) {
        Instant start = T0.plusSeconds(100L * n);
        RankResult cause = new RankResult(rank, 0, "n1", OptionalLong.of(100), start, start.plusMillis(Math.round(after * 1000)),
                WorkerState.FAILED, Optional.of(outcome), 0, 0, List.of(stderr), Optional.empty());
        return new AttemptResult(n, start, start.plusSeconds(5), List.of(cause), Optional.of(cause), false);
    }

    @Test
    void theSameQuickFailureTwiceIsALoopAndSaysWhy() {
        Optional<String> loop = CrashLoop.between(attempt(0, 1, new Outcome.Exited(1), 1.2, "Traceback", "ValueError: bad lr (pid 4123)", ""),
                attempt(1, 1, new Outcome.Exited(1), 0.9, "Traceback", "ValueError: bad lr (pid 4177)"), DEFAULTS);
        assertThat(loop).contains("crash loop: rank 1 failed the same way in attempts 0 and 1, 1.2 s and 0.9 s after their start"
                + " (exit 1: ValueError: bad lr (pid 4177)): no more restarts (failure.crash_loop_s: 0 restarts anyway;"
                + " failure.retry_exit_codes lists exit codes always worth one)");
        assertThat(CrashLoop.between(attempt(3, 0, new Outcome.Signalled(9, "SIGKILL"), 3, "Killed"),
                attempt(4, 0, new Outcome.Signalled(9, "SIGKILL"), 3, "Killed"), DEFAULTS)).isPresent();
    }

    @Test
    void anotherRankCodeLineOrALateFailureIsNone() {
        AttemptResult first = attempt(0, 1, new Outcome.Exited(1), 1, "ValueError: bad lr");
        assertThat(CrashLoop.between(first, attempt(1, 0, new Outcome.Exited(1), 1, "ValueError: bad lr"), DEFAULTS)).isEmpty();
        assertThat(CrashLoop.between(first, attempt(1, 1, new Outcome.Exited(2), 1, "ValueError: bad lr"), DEFAULTS)).isEmpty();
        assertThat(CrashLoop.between(first, attempt(1, 1, new Outcome.Exited(1), 1, "KeyError: 'x'"), DEFAULTS)).isEmpty();
        assertThat(CrashLoop.between(first, attempt(1, 1, new Outcome.Signalled(1, "SIGHUP"), 1, "ValueError: bad lr"), DEFAULTS)).isEmpty();
        assertThat(CrashLoop.between(first, attempt(1, 1, new Outcome.Exited(1), 60.5, "ValueError: bad lr"), DEFAULTS)).isEmpty();
        assertThat(CrashLoop.between(first, attempt(1, 1, new Outcome.Exited(1), 60, "ValueError: bad lr"), DEFAULTS)).isPresent();
    }

    @Test
    void lostHungRetryCodesAndATurnedOffGuardNeverLoop() {
        assertThat(CrashLoop.between(attempt(0, 0, new Outcome.Lost("no answer"), 1), attempt(1, 0, new Outcome.Lost("no answer"), 1),
                DEFAULTS)).isEmpty();
        assertThat(CrashLoop.between(attempt(0, 0, new Outcome.Hung("quiet", "stacks/a", List.of()), 1),
                attempt(1, 0, new Outcome.Hung("quiet", "stacks/a", List.of()), 1), DEFAULTS)).isEmpty();
        JobSpec.FailureSpec retry75 = new JobSpec.FailureSpec(10, 5, 0, 15, 60, Set.of(75));
        assertThat(CrashLoop.between(attempt(0, 0, new Outcome.Exited(75), 1), attempt(1, 0, new Outcome.Exited(75), 1), retry75)).isEmpty();
        assertThat(CrashLoop.between(attempt(0, 0, new Outcome.Exited(3), 1), attempt(1, 0, new Outcome.Exited(3), 1), retry75)).isPresent();
        JobSpec.FailureSpec off = new JobSpec.FailureSpec(10, 5, 0, 15, 0, Set.of());
        assertThat(CrashLoop.between(attempt(0, 0, new Outcome.Exited(3), 1), attempt(1, 0, new Outcome.Exited(3), 1), off)).isEmpty();
    }
}
