package org.runjob.cli;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Arrays;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.config.Configurator;
import org.runjob.agent.Agent;
import org.runjob.agent.Probe;
import org.runjob.launch.Interrupts;

import picocli.CommandLine;

/**
 * The entry point. {@link #run} builds the command tree, runs it and returns the exit code; only
 * {@link #main} exits the process.
 */
public final class Main {

    /** The first argument that makes this process a node agent. */
    public static final String AGENT = "agent";

    /** The first argument of the node-side rendezvous checks. */
    public static final String PROBE = "probe";

    private Main() {
    }

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals(AGENT)) {
            // the node agent: no picocli, no Log4j start-up; it speaks frames on stdin/stdout
            System.exit(Agent.main(Arrays.asList(args).subList(1, args.length), System.in, System.out, System.getenv()));
        }
        if (args.length > 0 && args[0].equals(PROBE)) {
            System.exit(Probe.main(Arrays.copyOfRange(args, 1, args.length), System.in, System.out));
        }
        // buffered: worker output is flushed whenever the supervisor has nothing queued, not per line
        PrintStream out = new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16),
                false, StandardCharsets.UTF_8);
        PrintStream err = new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8);
        SecureRandom random = new SecureRandom();
        Interrupts interrupts = Interrupts.installed();
        Io io = new Io(out, err, System.getenv(), Clock.systemUTC(), random::nextInt, System.console() != null, interrupts);
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
        cl.addSubcommand("check", new CheckCommand(io));
        cl.addSubcommand("gpus", new GpusCommand(io));
        // `runjob run FILE` is `runjob FILE`; `runjob help CMD` is `runjob CMD --help`
        cl.addSubcommand("run", new RunjobCommand(io));
        cl.addSubcommand("runs", new RunsCommand(io));
        cl.addSubcommand("status", new StatusCommand(io));
        cl.addSubcommand("logs", new LogsCommand(io));
        cl.addSubcommand("stop", new StopCommand(io));
        cl.addSubcommand("help", new CommandLine.HelpCommand());
        // bash (and zsh through bashcompinit) completion, generated from the command model
        cl.addSubcommand("completion", new picocli.AutoComplete.GenerateCompletion());
        cl.setOut(new PrintWriter(io.out(), true));
        cl.setErr(new PrintWriter(io.err(), true));
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
