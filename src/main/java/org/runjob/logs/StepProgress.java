package org.runjob.logs;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The training time that was not redone, from the {@code step} of each rank's metrics lines. Per
 * rank, between two marks of one attempt, the steps past the highest step any earlier mark of the
 * rank reached are new work, and they get their share of the interval's time; steps a restart
 * repeats from a checkpoint get none, nor does the time before an attempt's first mark (start-up,
 * loading the checkpoint). The run's useful time is rank 0's (or, without its marks, the lowest
 * rank's that has them). Constant memory per rank: the last mark and two sums.
 */
public final class StepProgress {

    private final Map<Integer, Rank> ranks = new TreeMap<>();

    private static final class Rank {
        int attempt = -1;
        Instant time;
        double step;
        double best = Double.NEGATIVE_INFINITY;
        double usefulSeconds;
        double redoneSteps;
    }

    /** The time of useful training and the steps done again, of the rank the run's goodput uses. */
    public record Useful(int rank, double seconds, double redoneSteps) {
    }

    /** A mark of {@code rank} in {@code attempt}: its metrics said {@code step} at {@code time}. */
    synchronized void step(int rank, int attempt, Instant time, double step) {
        Rank r = ranks.computeIfAbsent(rank, k -> new Rank());
        if (r.attempt == attempt && step > r.step && !time.isBefore(r.time)) {
            double fresh = Math.max(0, step - Math.max(r.step, r.best));
            r.usefulSeconds += Duration.between(r.time, time).toNanos() / 1e9 * fresh / (step - r.step);
            r.redoneSteps += step - r.step - fresh;
        }
        r.attempt = attempt;
        r.time = time;
        r.step = step;
        r.best = Math.max(r.best, step);
    }

    /** Rank 0's useful time, or the lowest rank's that marked steps; empty when no rank did. */
    public synchronized Optional<Useful> useful() {
        return ranks.entrySet().stream().findFirst().map(e -> new Useful(e.getKey(), e.getValue().usefulSeconds, e.getValue().redoneSteps));
    }
}
