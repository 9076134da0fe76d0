package org.runjob.launch;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One attempt of a run: every rank's result, the root cause (the first failure by arrival time) when
 * it failed, whether a Ctrl-C / SIGTERM ended it, and why no restart follows it where that is not
 * the restarts' count: its nodes are gone, or it repeated the attempt before it ({@link CrashLoop});
 * the spares that stood in for lost nodes right before it ({@link Spares}), and the lost nodes it
 * ran without ({@code failure.min_nodes}).
 */
public record AttemptResult(int attempt, Instant start, Instant end, List<RankResult> ranks,
                            Optional<RankResult> rootCause, boolean interrupted, Optional<String> interruptReason,
                            Optional<String> nodesGone, Optional<String> crashLoop, List<StandIn> standIns, List<String> dropped) {

    public AttemptResult {
        ranks = List.copyOf(ranks);
        standIns = List.copyOf(standIns);
        dropped = List.copyOf(dropped);
    }

    public AttemptResult(int attempt, Instant start, Instant end, List<RankResult> ranks, Optional<RankResult> rootCause, boolean interrupted,
                         Optional<String> interruptReason) {
        this(attempt, start, end, ranks, rootCause, interrupted, interruptReason, Optional.empty(), Optional.empty(), List.of(), List.of());
    }

    /** This attempt, with why its nodes are gone for good (the backend said so after it failed). */
    public AttemptResult withNodesGone(String why) {
        return new AttemptResult(attempt, start, end, ranks, rootCause, interrupted, interruptReason, Optional.of(why), crashLoop, standIns, dropped);
    }

    /** This attempt, with why it is taken for a crash loop. */
    public AttemptResult withCrashLoop(String why) {
        return new AttemptResult(attempt, start, end, ranks, rootCause, interrupted, interruptReason, nodesGone, Optional.of(why), standIns, dropped);
    }

    /** This attempt, with the spares that stood in for lost nodes right before it. */
    public AttemptResult withStandIns(List<StandIn> made) {
        return new AttemptResult(attempt, start, end, ranks, rootCause, interrupted, interruptReason, nodesGone, crashLoop, made, dropped);
    }

    /** This attempt, with the lost nodes it ran without. */
    public AttemptResult withDropped(List<String> nodes) {
        return new AttemptResult(attempt, start, end, ranks, rootCause, interrupted, interruptReason, nodesGone, crashLoop, standIns, nodes);
    }

    /**
     * The nodes this attempt lost: those with a worker that ended lost (its agent died or went
     * silent, or could not be started), in rank order, each with the first such worker's reason.
     */
    public Map<String, String> lostNodes() {
        Map<String, String> lost = new LinkedHashMap<>();
        for (RankResult r : ranks) {
            if (r.state() == WorkerState.LOST && r.outcome().orElse(null) instanceof Outcome.Lost l) {
                lost.putIfAbsent(r.node(), l.reason());
            }
        }
        return lost;
    }

    public AttemptResult(int attempt, Instant start, Instant end, List<RankResult> ranks, Optional<RankResult> rootCause, boolean interrupted) {
        this(attempt, start, end, ranks, rootCause, interrupted, Optional.empty());
    }

    /** "succeeded", "interrupted" or "failed": how summary.json, status.json and the report name the end. */
    public String verdict() {
        return succeeded() ? "succeeded" : interrupted() ? "interrupted" : "failed";
    }

    public boolean succeeded() {
        return !interrupted && ranks.stream().allMatch(r -> r.state() == WorkerState.SUCCEEDED);
    }
}
