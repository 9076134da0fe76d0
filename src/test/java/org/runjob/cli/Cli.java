package org.runjob.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;

/** Runs the CLI in-process with captured streams, a fixed clock and a fixed run-id salt. */
record Cli(int code, String out, String err) {

    static final Instant NOW = Instant.parse("2026-12-01T07:00:00Z");
    static final String RUN_ID = "20261201-070000-ab12";

    static Cli run(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Io io = new Io(new PrintWriter(out), new PrintWriter(err), env, Clock.fixed(NOW, ZoneOffset.UTC), () -> 0xab12);
        int code = Main.run(io, args);
        return new Cli(code, out.toString(), err.toString());
    }

    static Cli run(String... args) {
        return run(Map.of(), args);
    }
}
