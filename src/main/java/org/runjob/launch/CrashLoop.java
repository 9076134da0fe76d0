package org.runjob.launch;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

import org.runjob.spec.JobSpec;

/**
 * Tells a crash loop from a failure worth a restart: two attempts in a row that failed the same
 * way, each root cause within {@code failure.crash_loop_s} of its attempt's start. A failure's
 * way is its exit code or signal (or the reason it did not start) and its last stderr line,
 * digits aside (a pid, a size or a rank number differs between attempts). The root cause is only
 * the rank runjob heard from first, which is chance when every rank fails alike, so the two
 * attempts are compared over every rank that failed on its own: each attempt's root cause must
 * have failed the way some rank of the other attempt failed. A lost or hung rank is never one (the
 * node, not the code, may be at fault), nor an exit code in {@code failure.retry_exit_codes}.
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
        if (!quick(previous, before, window) || !quick(current, now, window)) {
            return Optional.empty();
        }
        Optional<String> was = way(before, failure.retryExitCodes());
        Optional<String> is = way(now, failure.retryExitCodes());
        if (was.isEmpty() || is.isEmpty() || !ways(previous, failure.retryExitCodes()).contains(is.get())
                || !ways(current, failure.retryExitCodes()).contains(was.get())) {
            return Optional.empty();
        }
        String line = lastLine(now);
        String who = before.rank() == now.rank() ? "rank " + now.rank()
                : "rank " + before.rank() + " (attempt " + previous.attempt() + ") and rank " + now.rank() + " (attempt " + current.attempt() + ")";
        return Optional.of("crash loop: " + who + " failed the same way in attempts " + previous.attempt() + " and "
                + current.attempt() + ", " + seconds(Duration.between(previous.start(), before.end())) + " and "
                + seconds(Duration.between(current.start(), now.end())) + " after their start (" + now.outcome().orElseThrow().describe()
                + (line.isEmpty() ? "" : ": " + line) + "): no more restarts (failure.crash_loop_s: 0 restarts anyway;"
                + " failure.retry_exit_codes lists exit codes always worth one)");
    }

    /** The ways the ranks of {@code attempt} failed on their own (not stopped by runjob, not lost). */
    private static Set<String> ways(AttemptResult attempt, Set<Integer> retry) {
        Set<String> out = new HashSet<>();
        for (RankResult r : attempt.ranks()) {
            if (r.state() == WorkerState.FAILED) {
                way(r, retry).ifPresent(out::add);
            }
        }
        attempt.rootCause().flatMap(r -> way(r, retry)).ifPresent(out::add);
        return out;
    }

    /** How {@code r} failed: its kind and its last stderr line without digits; empty where it never counts toward a loop. */
    private static Optional<String> way(RankResult r, Set<Integer> retry) {
        return kind(r, retry).map(k -> k + ": " + lastLine(r).replaceAll("[0-9]+", "#"));
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
