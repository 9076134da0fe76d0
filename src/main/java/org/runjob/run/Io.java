package org.runjob.run;

import java.io.PrintStream;
import java.time.Clock;
import java.util.Map;
import java.util.Objects;
import java.util.function.IntSupplier;

import org.runjob.report.PreflightText;
import org.runjob.session.Interrupts;

/**
 * What a command may touch of the outside world: its two output streams, the environment
 * (for {@code ${env:...}} and NO_COLOR), a clock, a source of randomness for run ids, whether
 * stdout is a terminal (colour), and the Ctrl-C counter. Tests pass their own.
 *
 * <p>Plans and results go to {@code out}; progress, problems and errors to {@code err}.
 */
public record Io(PrintStream out, PrintStream err, Map<String, String> env, Clock clock, IntSupplier random,
                 boolean terminal, Interrupts interrupts) {
    public Io {
        Objects.requireNonNull(out, "out");
        Objects.requireNonNull(err, "err");
        env = Map.copyOf(env);
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(random, "random");
        Objects.requireNonNull(interrupts, "interrupts");
    }

    /** How wide a table may be: a terminal's 100 columns, or unbounded for a file or a pipe (nothing cut). */
    public static int width(Io io) {
        return io.terminal() ? PreflightText.MAX_WIDTH : Integer.MAX_VALUE;
    }

    /** Colour on a terminal, unless NO_COLOR is set or TERM is dumb. */
    public static boolean colour(Io io) {
        return io.terminal() && !io.env().containsKey("NO_COLOR") && !"dumb".equals(io.env().get("TERM"));
    }
}
