package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

import org.junit.jupiter.api.Test;
import org.runjob.spec.JobSpec;

/** The recovery decisions on simulated timelines, in milliseconds from the run's start: no process, no node. */
class RecoveryPolicyTest {

    private static final Instant T0 = Instant.parse("2026-12-07T05:00:00Z");
    private static final JobSpec.FailureSpec FAILURE = new JobSpec.FailureSpec(10, 3);

    /** One rank of an attempt: {@code node}, {@code state} and {@code outcome} at {@code endMs}, its last stderr line {@code line}. */
    private record Rank(int rank, String node, WorkerState state, Outcome outcome, long endMs, String line) {
    }

    /** An attempt from {@code startMs} to {@code endMs}; the root cause is the rank that ended first in FAILED or LOST. */
    private static AttemptResult attempt(int n, long startMs, long endMs, Rank... ranks) {
        Instant start = T0.plusMillis(startMs);
        List<RankResult> all = new ArrayList<>();
        RankResult cause = null;
        for (Rank r : ranks) {
            RankResult rr = new RankResult(r.rank(), 0, r.node(), OptionalLong.of(1000 + r.rank()), start, T0.plusMillis(r.endMs()), r.state(),
                    Optional.of(r.outcome()), 0, 0, r.line().isEmpty() ? List.of() : List.of(r.line()), Optional.empty());
            all.add(rr);
            if ((r.state() == WorkerState.FAILED || r.state() == WorkerState.LOST) && (cause == null || rr.end().isBefore(cause.end()))) {
                cause = rr;
            }
        }
        return new AttemptResult(n, start, T0.plusMillis(endMs), all, Optional.ofNullable(cause), false);
    }

    private static Rank ok(int rank, String node, long endMs) {
        return new Rank(rank, node, WorkerState.SUCCEEDED, new Outcome.Exited(0), endMs, "");
    }

    private static Rank failed(int rank, String node, long endMs, int code, String line) {
        return new Rank(rank, node, WorkerState.FAILED, new Outcome.Exited(code), endMs, line);
    }

    private static Rank stopped(int rank, String node, long endMs) {
        return new Rank(rank, node, WorkerState.STOPPED, new Outcome.Signalled(15, "SIGTERM"), endMs, "");
    }

    private static Rank lost(int rank, String node, long endMs, String why) {
        return new Rank(rank, node, WorkerState.LOST, new Outcome.Lost(why), endMs, "");
    }

    @Test
    void aSucceededOrInterruptedAttemptEndsTheRunAndJudgesNoNode() {
        AttemptResult done = attempt(0, 0, 9_000, ok(0, "a", 8_000), ok(1, "b", 8_500));
        assertThat(RecoveryPolicy.after(done, Optional.empty(), FAILURE, 3, Optional.empty())).isEqualTo(new RecoveryPolicy.Next.End());
        AttemptResult stoppedByUser = new AttemptResult(0, T0, T0.plusSeconds(3), done.ranks(), Optional.empty(), true);
        assertThat(RecoveryPolicy.after(stoppedByUser, Optional.empty(), FAILURE, 3, Optional.of("job 7 was cancelled")))
                .isEqualTo(new RecoveryPolicy.Next.End());
    }

    /** scancel during a run: the backend says the nodes are gone, so no node is judged lost and no restart follows, restarts left or not. */
    @Test
    void nodesTheBackendTookAwayEndTheRunWithItsWordWhateverRestartsAreLeft() {
        AttemptResult cancelled = attempt(0, 0, 4_000, lost(0, "a", 3_000, "node a lost (the connection to its agent broke)"),
                lost(1, "b", 3_100, "node b lost (the connection to its agent broke)"));
        RecoveryPolicy.Next next = RecoveryPolicy.after(cancelled, Optional.empty(), FAILURE, 3, Optional.of("Slurm job 42 was cancelled"));
        assertThat(next).isEqualTo(new RecoveryPolicy.Next.NodesGone("Slurm job 42 was cancelled"));
        assertThat(RecoveryPolicy.after(cancelled, Optional.empty(), FAILURE, 0, Optional.of("Slurm job 42 was cancelled"))).isEqualTo(next);
    }

    @Test
    void aFailureRestartsUntilTheRestartsAreSpent() {
        AttemptResult first = attempt(0, 0, 20_000, failed(0, "a", 15_000, 1, "RuntimeError: NCCL timeout"), stopped(1, "b", 16_000));
        assertThat(RecoveryPolicy.after(first, Optional.empty(), FAILURE, 3, Optional.empty())).isEqualTo(new RecoveryPolicy.Next.Restart());
        AttemptResult last = attempt(3, 100_000, 120_000, failed(0, "a", 115_000, 1, "RuntimeError: NCCL timeout"), stopped(1, "b", 116_000));
        assertThat(RecoveryPolicy.after(last, Optional.of(first), FAILURE, 3, Optional.empty())).isEqualTo(new RecoveryPolicy.Next.End());
    }

    /** 8 ranks fail on one import, rank 5 heard first in attempt 0 and rank 2 in attempt 1: a loop, whatever the order. */
    @Test
    void everyRankFailingAlikeIsACrashLoopWhicheverRankIsHeardFirst() {
        String line = "ModuleNotFoundError: No module named 'apex'";
        List<Rank> a0 = new ArrayList<>();
        List<Rank> a1 = new ArrayList<>();
        for (int r = 0; r < 8; r++) {
            a0.add(r == 5 ? failed(r, "n" + r / 4, 1_200, 1, line) : r % 2 == 0 ? failed(r, "n" + r / 4, 1_300 + r, 1, line) : stopped(r, "n" + r / 4, 1_500));
            a1.add(r == 2 ? failed(r, "n" + r / 4, 11_100, 1, line) : stopped(r, "n" + r / 4, 11_500));
        }
        AttemptResult first = attempt(0, 0, 2_000, a0.toArray(Rank[]::new));
        AttemptResult second = attempt(1, 10_000, 12_000, a1.toArray(Rank[]::new));
        assertThat(first.rootCause().orElseThrow().rank()).isEqualTo(5);
        assertThat(second.rootCause().orElseThrow().rank()).isEqualTo(2);
        RecoveryPolicy.Next next = RecoveryPolicy.after(second, Optional.of(first), FAILURE, 3, Optional.empty());
        assertThat(next).isInstanceOf(RecoveryPolicy.Next.CrashLoop.class);
        assertThat(((RecoveryPolicy.Next.CrashLoop) next).why()).startsWith("crash loop: rank 5 (attempt 0) and rank 2 (attempt 1) failed the same way"
                + " in attempts 0 and 1, 1.2 s and 1.1 s after their start (exit 1: ModuleNotFoundError: No module named 'apex')");
    }

    /**
     * kill -9 of node a's agent (the OOM killer), a 20 s login on node b, runjob behind on its
     * output: each ends the attempt, and none is evidence about a machine. Only node c, which a
     * fresh connection cannot reach either, is lost and quarantined.
     */
    @Test
    void aNodeIsLostAndQuarantinedOnlyWhenAFreshConnectionFailsToo() {
        Map<String, String> agentFailures = new LinkedHashMap<>();
        agentFailures.put("a", "node a lost (its agent exited)");
        agentFailures.put("b", "its agent answered no heartbeat for 15 s (stopped, hung, or its link is gone)");
        agentFailures.put("c", "its agent answered no heartbeat for 15 s (stopped, hung, or its link is gone)");
        Map<String, RecoveryPolicy.Fate> fates = RecoveryPolicy.fates(agentFailures,
                Map.of("c", "node c (10.0.0.3:22): cannot connect: connect timed out after 10 s"));
        assertThat(fates.keySet()).containsExactly("a", "b", "c");
        assertThat(fates.get("a")).isEqualTo(new RecoveryPolicy.Fate.Answers("a", "node a lost (its agent exited)"));
        assertThat(fates.get("b")).isInstanceOf(RecoveryPolicy.Fate.Answers.class);
        assertThat(RecoveryPolicy.quarantine(fates.get("a"))).isEmpty();
        assertThat(RecoveryPolicy.quarantine(fates.get("b"))).isEmpty();
        assertThat(RecoveryPolicy.quarantine(fates.get("c"))).contains("lost: its agent answered no heartbeat for 15 s (stopped, hung, or its link is"
                + " gone); a fresh connection failed too: node c (10.0.0.3:22): cannot connect: connect timed out after 10 s");
        assertThat(RecoveryPolicy.lost(fates)).containsOnlyKeys("c");
        assertThat(RecoveryPolicy.lost(fates).get("c")).endsWith("a fresh connection failed too: node c (10.0.0.3:22): cannot connect:"
                + " connect timed out after 10 s");
    }

    /** A lost node that fails the same way twice is not a crash loop: the node, not the code, may be at fault. */
    @Test
    void aNodeLostTwiceIsNoCrashLoopAndRestartsGoOn() {
        AttemptResult first = attempt(0, 0, 5_000, lost(0, "a", 2_000, "node a lost (its agent exited)"), stopped(1, "b", 3_000));
        AttemptResult second = attempt(1, 10_000, 15_000, lost(0, "a", 12_000, "node a lost (its agent exited)"), stopped(1, "b", 13_000));
        assertThat(RecoveryPolicy.after(second, Optional.of(first), FAILURE, 3, Optional.empty())).isEqualTo(new RecoveryPolicy.Next.Restart());
    }
}
