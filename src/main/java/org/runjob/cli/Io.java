package org.runjob.cli;

import java.io.PrintWriter;
import java.time.Clock;
import java.util.Map;
import java.util.Objects;
import java.util.function.IntSupplier;

/**
 * What a command may touch of the outside world: its two output streams, the environment
 * (for {@code ${env:...}}), a clock and a source of randomness for run ids. Tests pass their own.
 *
 * <p>Plans and results go to {@code out}; progress, problems and errors to {@code err}.
 */
public record Io(PrintWriter out, PrintWriter err, Map<String, String> env, Clock clock, IntSupplier random) {
    public Io {
        Objects.requireNonNull(out, "out");
        Objects.requireNonNull(err, "err");
        env = Map.copyOf(env);
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(random, "random");
    }
}
