package org.runjob.launch;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

import org.runjob.spec.JobSpec;

/**
 * Tells a crash loop from a failure worth a restart: two attempts in a row whose root causes are
 * the same failure (the same rank, the same exit code or signal, or the same reason it did not
 * start, and the same last stderr line, digits aside: a pid or a size differs between attempts),
 * each within {@code failure.crash_loop_s} of its attempt's start. A lost or hung rank is never
 * one (the node, not the code, may be at fault), nor an exit code in
 * {@code failure.retry_exit_codes}.
 */
final class CrashLoop {

    private CrashLoop() {
    }

    /** Why {@code current}, after {@code previous}, ends the restarts; empty when it does not. */
    static Optional<String> between(AttemptResult previous, AttemptResult current, JobSpec.FailureSpec failure) {
        if (failure.crashLoopSeconds() == 0 || previous.rootCause().isEmpty() || current.rootCause().isEmpty()) {
            return Optional.empty();
        }
        RankResult before = previous.rootCause().get();
        RankResult now = current.rootCause().get();
        Duration window = Duration.ofSeconds(failure.crashLoopSeconds());
        if (before.rank() != now.rank() || !quick(previous, before, window) || !quick(current, now, window)) {
            return Optional.empty();
        }
        Optional<String> kind = kind(now, failure.retryExitCodes());
        if (kind.isEmpty() || !kind.equals(kind(before, failure.retryExitCodes()))
                || !lastLine(before).replaceAll("[0-9]+", "#").equals(lastLine(now).replaceAll("[0-9]+", "#"))) {
            return Optional.empty();
        }
        String line = lastLine(now);
        return Optional.of("crash loop: rank " + now.rank() + " failed the same way in attempts " + previous.attempt() + " and "
                + current.attempt() + ", " + seconds(Duration.between(previous.start(), before.end())) + " and "
                + seconds(Duration.between(current.start(), now.end())) + " after their start (" + now.outcome().orElseThrow().describe()
                + (line.isEmpty() ? "" : ": " + line) + "): no more restarts (failure.crash_loop_s: 0 restarts anyway;"
                + " failure.retry_exit_codes lists exit codes always worth one)");
    }

    private static boolean quick(AttemptResult attempt, RankResult cause, Duration window) {
        return cause.end() != null && attempt.start() != null && Duration.between(attempt.start(), cause.end()).compareTo(window) <= 0;
    }

    /** The failure's kind, or empty where it never counts toward a loop. */
    private static Optional<String> kind(RankResult r, Set<Integer> retry) {
        Outcome o = r.outcome().orElse(null);
        if (o instanceof Outcome.Exited e) {
            return e.code() == 0 || retry.contains(e.code()) ? Optional.empty() : Optional.of("exit " + e.code());
        } else if (o instanceof Outcome.Signalled s) {
            return Optional.of("signal " + s.signal());
        } else if (o instanceof Outcome.NotStarted n) {
            return Optional.of("not started: " + n.reason());
        }
        return Optional.empty(); // lost, hung, or never ended
    }

    private static String lastLine(RankResult r) {
        List<String> tail = r.stderrTail();
        for (int i = tail.size() - 1; i >= 0; i--) {
            if (!tail.get(i).isBlank()) {
                return tail.get(i).strip();
            }
        }
        return "";
    }

    private static String seconds(Duration d) {
        return String.format(Locale.ROOT, "%.1f s", d.toMillis() / 1000.0);
    }
}
