package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
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
    void anotherCodeLineOrALateFailureIsNone() {
        AttemptResult first = attempt(0, 1, new Outcome.Exited(1), 1, "ValueError: bad lr");
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

    /**
     * Eight ranks that fail alike (a missing module): whichever rank runjob hears from first, the
     * attempts are the same failure. Every order of the first rank, 64 pairs, is a loop.
     */
    @Test
    void eightRanksThatFailAlikeAreALoopWhicheverRankFailsFirst() {
        for (int first0 = 0; first0 < 8; first0++) {
            for (int first1 = 0; first1 < 8; first1++) {
                Optional<String> loop = CrashLoop.between(allFail(0, first0, 8), allFail(1, first1, 8), DEFAULTS);
                assertThat(loop).as("first ranks %d and %d", first0, first1).isPresent();
            }
        }
        assertThat(CrashLoop.between(allFail(0, 3, 8), allFail(1, 6, 8), DEFAULTS)).contains("crash loop: rank 3 (attempt 0) and rank 6"
                + " (attempt 1) failed the same way in attempts 0 and 1, 2.0 s and 2.0 s after their start (exit 1: [rank6]:"
                + " ModuleNotFoundError: No module named 'apex'): no more restarts (failure.crash_loop_s: 0 restarts anyway;"
                + " failure.retry_exit_codes lists exit codes always worth one)");
    }

    /** The first rank failing alike in both attempts, while the others were stopped by runjob, is a loop; another way is not. */
    @Test
    void aRootCauseMustHaveFailedAsSomeRankOfTheOtherAttemptDid() {
        AttemptResult onlyFirst = allFail(0, 2, 1);
        assertThat(CrashLoop.between(onlyFirst, allFail(1, 5, 1), DEFAULTS)).isPresent();
        Instant start = T0.plusSeconds(100);
        RankResult other = new RankResult(5, 0, "n2", OptionalLong.of(100), start, start.plusSeconds(2), WorkerState.FAILED,
                Optional.of(new Outcome.Exited(1)), 0, 0, List.of("KeyError: 'lr'"), Optional.empty());
        RankResult stopped = new RankResult(2, 0, "n1", OptionalLong.of(101), start, start.plusSeconds(3), WorkerState.STOPPED,
                Optional.of(new Outcome.Exited(1)), 0, 0, List.of("[rank2]: ModuleNotFoundError: No module named 'apex'"), Optional.empty());
        AttemptResult differs = new AttemptResult(1, start, start.plusSeconds(5), List.of(stopped, other), Optional.of(other), false);
        assertThat(CrashLoop.between(onlyFirst, differs, DEFAULTS)).as("a stopped rank's last line is not its own failure").isEmpty();
    }

    /** Attempt {@code n} of {@code ranks} ranks that each exit 1 on the same missing module, 2 s in; {@code first} is the root cause. */
    private static AttemptResult allFail(int n, int first, int ranks) {
        Instant start = T0.plusSeconds(100L * n);
        List<RankResult> all = new ArrayList<>();
        RankResult cause = null;
        for (int r = 0; r < Math.max(ranks, first + 1); r++) {
            if (ranks == 1 && r != first) {
                continue;
            }
            RankResult rr = new RankResult(r, r % 4, "n" + (r / 4 + 1), OptionalLong.of(100 + r), start,
                    start.plusMillis(2000 + (r == first ? 0 : 10 * r)), WorkerState.FAILED, Optional.of(new Outcome.Exited(1)), 0, 0,
                    List.of("Traceback (most recent call last):", "[rank" + r + "]: ModuleNotFoundError: No module named 'apex'"),
                    Optional.empty());
            all.add(rr);
            if (r == first) {
                cause = rr;
            }
        }
        return new AttemptResult(n, start, start.plusSeconds(5), all, Optional.of(cause), false);
    }
}
