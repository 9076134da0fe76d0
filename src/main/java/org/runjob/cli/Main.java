package org.runjob.cli;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.config.Configurator;

import picocli.CommandLine;

/**
 * The entry point. {@link #run} builds the command tree, runs it and returns the exit code; only
 * {@link #main} exits the process.
 */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(new java.io.OutputStreamWriter(System.out, StandardCharsets.UTF_8), true);
        PrintWriter err = new PrintWriter(new java.io.OutputStreamWriter(System.err, StandardCharsets.UTF_8), true);
        SecureRandom random = new SecureRandom();
        Io io = new Io(out, err, System.getenv(), Clock.systemUTC(), random::nextInt);
        int code = run(io, args);
        out.flush();
        err.flush();
        System.exit(code);
    }

    /** Runs runjob with {@code args}; never throws, never exits. */
    public static int run(Io io, String... args) {
        CommandLine cl = new CommandLine(new RunjobCommand(io));
        cl.addSubcommand("validate", new ValidateCommand(io));
        cl.addSubcommand("plan", new PlanCommand(io));
        cl.setOut(io.out());
        cl.setErr(io.err());
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setExecutionStrategy(parseResult -> {
            boolean verbose = parseResult.asCommandLineList().stream()
                    .anyMatch(c -> c.getParseResult().hasMatchedOption("--verbose"));
            Configurator.setRootLevel(verbose ? Level.DEBUG : Level.WARN);
            return new CommandLine.RunLast().execute(parseResult);
        });
        cl.setExecutionExceptionHandler((ex, cmd, parseResult) -> {
            boolean verbose = parseResult.asCommandLineList().stream()
                    .anyMatch(c -> c.getParseResult().hasMatchedOption("--verbose"));
            io.err().println("runjob: internal error: " + ex
                    + (verbose ? "" : " (run with --verbose for the stack trace)"));
            if (verbose) {
                ex.printStackTrace(io.err());
            }
            io.err().flush();
            return ExitCode.INTERNAL;
        });
        int code = cl.execute(args);
        io.out().flush();
        io.err().flush();
        return code;
    }
}
