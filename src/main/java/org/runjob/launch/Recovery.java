package org.runjob.launch;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import org.runjob.logs.StepProgress;

/**
 * How a run spent its time. An attempt's running phase is from the moment its last worker started
 * to its end; the goodput ({@link #goodput}) is the share of the run's wall time that trained
 * something kept: by the workers' steps when they report them, else by running phases. The recovery before attempt N (N after the run's first) has three phases: stop (from
 * attempt N-1's first failure, as runjob saw it, to its end: every worker stopped), replace (to
 * attempt N's start: spares stood in, lost nodes waited for) and relaunch (to its last worker's start).
 * A link that dies silently is seen a heartbeat timeout after it died: that time is before the stop.
 */
public final class Recovery {

    /** The phases before one attempt, in seconds; {@code relaunch} is empty when not every worker started. */
    public record Phases(int attempt, double stop, double replace, Optional<Double> relaunch) {
    }

    private Recovery() {
    }

    /** When the attempt's last worker started; empty when one never did. */
    public static Optional<Instant> running(AttemptResult a) {
        if (a.ranks().isEmpty() || a.ranks().stream().anyMatch(r -> r.start() == null)) {
            return Optional.empty();
        }
        return a.ranks().stream().map(RankResult::start).max(Comparator.naturalOrder());
    }

    /** When runjob saw the attempt's first failure: its root cause's end; empty for an attempt that did not fail. */
    public static Optional<Instant> firstFailure(AttemptResult a) {
        return a.rootCause().map(RankResult::end).filter(Objects::nonNull);
    }

    /** The phases before each attempt after the first. */
    public static List<Phases> phases(List<AttemptResult> attempts) {
        List<Phases> out = new ArrayList<>();
        for (int i = 1; i < attempts.size(); i++) {
            AttemptResult before = attempts.get(i - 1);
            AttemptResult a = attempts.get(i);
            Instant failed = firstFailure(before).orElse(before.end());
            out.add(new Phases(a.attempt(), seconds(failed, before.end()), seconds(before.end(), a.start()),
                    running(a).map(r -> seconds(a.start(), r))));
        }
        return out;
    }

    /**
     * The run's goodput: a share (0-1) of its wall time, and what was counted.
     *
     * @param basis        {@code steps} (training time not redone, from the workers' step marks) or
     *                     {@code running} (the attempts' running phases)
     * @param redoneSteps  with {@code steps}: how many steps restarts did again
     */
    public record Goodput(double share, String basis, double redoneSteps) {
    }

    /**
     * The goodput of a run of {@code attempts}. With step marks ({@code steps}): the training
     * time that was not redone over the wall time, so a restart from an old checkpoint, or a crash
     * loop that never trained, counts what it cost. Without them: the attempts' running phases
     * over the wall time, leaving out each attempt that failed within {@code quickSeconds} of its
     * start (it trained nothing worth keeping; 0 leaves none out).
     */
    public static Goodput goodput(List<AttemptResult> attempts, Optional<StepProgress.Useful> steps, int quickSeconds) {
        double wall = seconds(attempts.get(0).start(), attempts.get(attempts.size() - 1).end());
        if (steps.isPresent()) {
            return new Goodput(wall <= 0 ? 0 : Math.min(1, steps.get().seconds() / wall), "steps", steps.get().redoneSteps());
        }
        if (wall <= 0) {
            return new Goodput(0, "running", 0);
        }
        double running = 0;
        for (AttemptResult a : attempts) {
            Optional<Instant> r = running(a);
            boolean quickFailure = quickSeconds > 0 && !a.succeeded() && !a.interrupted()
                    && firstFailure(a).map(f -> seconds(a.start(), f) <= quickSeconds).orElse(false);
            if (r.isPresent() && !quickFailure) {
                running += seconds(r.get(), a.end());
            }
        }
        return new Goodput(Math.min(1, running / wall), "running", 0);
    }

    private static double seconds(Instant from, Instant to) {
        return Math.max(0, Duration.between(from, to).toNanos() / 1e9);
    }
}
