package org.runjob.report;

import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

import org.runjob.launch.AttemptResult;
import org.runjob.launch.Outcome;
import org.runjob.launch.RankResult;
import org.runjob.launch.Recovery;
import org.runjob.launch.RunResult;

/**
 * The end-of-run report: on failure a "root cause" block first (the first failure by time: node,
 * rank and local rank, exit code or signal, pid; the exception and traceback from its
 * TORCHELASTIC_ERROR_FILE when torch's {@code @record} wrote one; for a hang, each rank's innermost frames;
 * the last stderr lines), then one row per rank
 * (node, rank, result, duration), then where the run folder is; after restarts, the spares that
 * stood in, each recovery's phases and the share of the run spent running ({@link Recovery}).
 */
public final class RunReport {

    private RunReport() {
    }

    public static void print(RunResult run, PrintStream out) {
        AttemptResult last = run.last();
        out.println();
        run.attempts().forEach(a -> a.standIns().forEach(s -> out.println(s.describe())));
        run.attempts().stream().filter(a -> !a.dropped().isEmpty()).forEach(a -> out.println("attempt " + a.attempt() + " ran without "
                + String.join(", ", a.dropped()) + " on " + a.ranks().size() + " rank" + (a.ranks().size() == 1 ? "" : "s")
                + " (failure.min_nodes)"));
        for (Recovery.Phases p : Recovery.phases(run.attempts())) {
            out.printf("attempt %d began %s after attempt %d failed (stop %s, replace %s), its workers %s%n", p.attempt(),
                    seconds(p.stop() + p.replace()), p.attempt() - 1, seconds(p.stop()), seconds(p.replace()),
                    p.relaunch().map(r -> "all running " + seconds(r) + " later").orElse("not all started"));
        }
        last.nodesGone().ifPresent(why -> out.println("the nodes are gone: " + why));
        last.crashLoop().ifPresent(out::println);
        last.rootCause().ifPresent(cause -> rootCause(cause, out));
        if (last.interrupted()) {
            out.println("interrupted" + last.interruptReason().map(r -> " (" + r + ")").orElse("") + ": every worker was stopped");
        }
        Table t = Table.of("%-16s %5s %6s  %-10s %-28s %9s", "node", "rank", "local", "result", "outcome", "duration");
        for (RankResult r : last.ranks()) {
            t.row(r.node(), r.rank(), r.localRank(), r.state().label(), r.outcome().map(Outcome::describe).map(RunReport::clip).orElse("-"),
                    seconds(r.duration()));
        }
        t.print(out);
        String verdict = last.verdict();
        String attempts = run.attempts().size() == 1 ? "" : " after " + run.attempts().size() + " attempts";
        String running = run.attempts().size() == 1 ? "" : String.format(Locale.ROOT, ", %.0f%% of it %s", 100 * run.goodput().share(),
                run.goodput().basis().equals("steps") ? "useful training (steps not redone)" : "running");
        out.printf("job %s run %s %s%s in %s%s; logs in %s%n", run.job(), run.runId(), verdict, attempts,
                seconds(Duration.between(run.attempts().get(0).start(), last.end())), running, run.folder());
        out.flush();
    }

    private static void rootCause(RankResult cause, PrintStream out) {
        out.println("root cause: rank " + cause.rank() + " (local rank " + cause.localRank() + ") on node " + cause.node()
                + ": " + cause.outcome().map(Outcome::describe).orElse("?")
                + (cause.pid().isPresent() ? ", pid " + cause.pid().getAsLong() : ""));
        if (cause.outcome().orElse(null) instanceof Outcome.Hung hung) {
            out.println("  each rank's main thread, innermost frame first (every thread of every process in " + hung.folder() + "/):");
            hung.stacks().forEach(line -> out.println("  | " + line));
        }
        cause.errorFile().flatMap(ErrorFile::parse).ifPresent(e -> {
            out.println("  error (TORCHELASTIC_ERROR_FILE): " + e.message());
            List<String> trace = e.traceback();
            if (!trace.isEmpty()) {
                List<String> last = trace.subList(Math.max(0, trace.size() - 20), trace.size());
                out.println("  traceback" + (last.size() < trace.size() ? " (last " + last.size() + " lines)" : "") + ":");
                last.forEach(line -> out.println("  | " + line));
            }
        });
        List<String> tail = cause.stderrTail();
        if (tail.isEmpty()) {
            out.println("  (no stderr)");
        } else {
            out.println("  last " + tail.size() + " stderr line" + (tail.size() == 1 ? "" : "s") + ":");
            tail.forEach(line -> out.println("  | " + line));
        }
        out.println();
    }

    private static String clip(String s) {
        return s.length() <= 28 ? s : s.substring(0, 25) + "...";
    }

    private static String seconds(Duration d) {
        return String.format(Locale.ROOT, "%.1fs", d.toMillis() / 1000.0);
    }

    private static String seconds(double s) {
        return String.format(Locale.ROOT, "%.1fs", s);
    }
}
