package org.runjob.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.Map;

import org.runjob.run.Io;
import org.runjob.session.Interrupts;

/** Runs the CLI in-process with captured streams, a fixed clock and a fixed run-id salt. */
public record Cli(int code, String out, String err) {

    static final Instant NOW = Instant.parse("2026-12-01T07:00:00Z");
    public static final String RUN_ID = "20261201-070000-ab12";

    public static Cli run(Map<String, String> env, String... args) {
        return run(Clock.fixed(NOW, ZoneOffset.UTC), env, args);
    }

    /** With the real clock: for what reads times a live run wrote (status's ages). */
    public static Cli runNow(Map<String, String> env, String... args) {
        return run(Clock.systemUTC(), env, args);
    }

    private static Cli run(Clock clock, Map<String, String> env, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Io io = new Io(new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                env, clock, () -> 0xab12, false, Interrupts.none());
        int code = Main.run(io, args);
        return new Cli(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** {@code runjob OPTIONS... JOB} with this JVM's environment. */
    public static Cli job(Path job, String... options) {
        String[] args = Arrays.copyOf(options, options.length + 1);
        args[options.length] = job.toString();
        return run(System.getenv(), args);
    }

    public static Cli run(String... args) {
        return run(Map.of(), args);
    }
}
