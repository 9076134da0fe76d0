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
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.config.Configurator;
import org.runjob.agent.AgentMain;
import org.runjob.protocol.NodeJvm;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.runs.HostedStart;
import org.runjob.session.Interrupts;

import picocli.AutoComplete;
import picocli.CommandLine;

/**
 * The entry point. {@link #run} builds the command tree, runs it and returns the exit code; only
 * {@link #main} exits the process.
 */
public final class Main {

    /** On a submitted run's master node: start its coordinator ({@link HostedStart}). */
    public static final String COORDINATE = "coordinate";
    /** On a submitted run's master node: a runjob command (status, logs, stop) about it. */
    public static final String NODE_CLI = "cli";

    private static final String SLF4J_PROVIDER = "slf4j.provider";

    private Main() {
    }

    public static void main(String[] args) {
        // a runjob command started on a node the way its agent is (agent --jar SHA --then ...): session.NodeCommand
        args = NodeJvm.afterThen(args);
        if (args.length > 0 && args[0].equals(NODE_CLI)) {
            System.exit(HostedStart.cli(Arrays.copyOfRange(args, 1, args.length), Main::run));
        }
        if (args.length > 0 && args[0].equals(COORDINATE)) {
            System.exit(HostedStart.coordinate(Arrays.asList(args).subList(1, args.length), System.in, System.out));
        }
        if (args.length > 0 && NodeJvm.COMMANDS.contains(args[0])) {
            // the node side (an agent, its GPU probe, a node host): no picocli, no Log4j start-up
            System.exit(AgentMain.run(args));
        }
        // buffered: worker output is flushed whenever the supervisor has nothing queued, not per line
        PrintStream out = new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16),
                false, StandardCharsets.UTF_8);
        PrintStream err = new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8);
        Interrupts interrupts = Interrupts.installed();
        Io io = new Io(out, err, System.getenv(), Clock.systemUTC(), () -> Randomness.SOURCE.nextInt(), System.console() != null, interrupts);
        int code = run(io, args);
        out.flush();
        err.flush();
        System.exit(code);
    }

    /** Arguments that print a usage listing the subcommands (or generate completion from all of them). */
    private static final Set<String> LISTS_COMMANDS = Set.of("-h", "--help", "help", "completion");

    /** Every subcommand, by name, in the order usage lists them; each built when called. */
    private static Map<String, Supplier<Object>> subcommands(Io io) {
        Map<String, Supplier<Object>> all = new LinkedHashMap<>();
        all.put("validate", () -> new ValidateCommand(io));
        all.put("plan", () -> new PlanCommand(io));
        all.put("check", () -> new CheckCommand(io));
        all.put("gpus", () -> new GpusCommand(io));
        all.put("nodes", () -> new NodesCommand(io));
        // `runjob run FILE` is `runjob FILE`; `runjob help CMD` is `runjob CMD --help`
        all.put("run", () -> {
            CommandLine run = new CommandLine(new RunjobCommand(io));
            run.getCommandSpec().name("run"); // else its usage reads "runjob runjob"
            return run;
        });
        all.put("submit", () -> new SubmitCommand(io));
        all.put("runs", () -> new RunsCommand(io));
        all.put("status", () -> new StatusCommand(io));
        all.put("logs", () -> new LogsCommand(io));
        all.put("stop", () -> new StopCommand(io));
        all.put("resume", () -> new ResumeCommand(io));
        all.put("stacks", () -> new StacksCommand(io));
        all.put("top", () -> new TopCommand(io));
        all.put("plot", () -> new PlotCommand(io));
        all.put("pull", () -> new PullCommand(io));
        all.put("serve", () -> new ServeCommand(io));
        all.put("help", CommandLine.HelpCommand::new);
        // bash (and zsh through bashcompinit) completion, generated from the command model
        all.put("completion", AutoComplete.GenerateCompletion::new);
        return all;
    }

    /** Run ids' randomness, seeded when the first id is made: a command that makes none skips it (about 10 ms). */
    private static final class Randomness {
        static final SecureRandom SOURCE = new SecureRandom();
    }

    /** Runs runjob with {@code args}; never throws, never exits. */
    public static int run(Io io, String... args) {
        if (!Arrays.asList(args).contains("--verbose") && System.getProperty(SLF4J_PROVIDER) == null) {
            // the schema library logs through SLF4J, whose Log4j binding would start Log4j (about 0.4 CPU-s) on
            // every validate and dry run; its messages are shown with --verbose only
            System.setProperty(SLF4J_PROVIDER, "org.slf4j.helpers.NOP_FallbackServiceProvider");
            System.setProperty("slf4j.internal.verbosity", "WARN"); // else SLF4J says which provider it loads
        }
        Map<String, Supplier<Object>> subcommands = subcommands(io);
        // a usage listing gets every subcommand: help, or no FILE and no command to run
        boolean whole = Arrays.stream(args).anyMatch(LISTS_COMMANDS::contains)
                || Arrays.stream(args).allMatch(a -> a.startsWith("-") && !a.equals("-V") && !a.equals("--version"));
        boolean alone = !whole && args.length > 0 && subcommands.containsKey(args[0]) && !args[0].equals("run");
        CommandLine cl;
        String[] rest;
        if (alone) {
            // `runjob CMD ...`: CMD's model alone, named as picocli names it under runjob (the root's model, with
            // its options and mixins, costs start-up time and parses nothing here)
            Object command = subcommands.get(args[0]).get();
            cl = command instanceof CommandLine c ? c : new CommandLine(command);
            cl.getCommandSpec().name("runjob " + args[0]);
            rest = Arrays.copyOfRange(args, 1, args.length);
        } else {
            // only the subcommands named in args can match, so only those are built
            cl = new CommandLine(new RunjobCommand(io));
            subcommands.forEach((name, make) -> {
                if (whole || Arrays.asList(args).contains(name)) {
                    cl.addSubcommand(name, make.get());
                }
            });
            rest = args;
        }
        cl.setOut(new PrintWriter(io.out(), true));
        cl.setErr(new PrintWriter(io.err(), true));
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setExecutionStrategy(parseResult -> {
            boolean verbose = parseResult.asCommandLineList().stream()
                    .anyMatch(c -> c.getParseResult().hasMatchedOption("--verbose"));
            if (verbose) {
                // only then: Log4j's start-up (about 0.4 CPU-s) is paid by the commands that log, when they log
                Configurator.setRootLevel(Level.DEBUG);
            }
            return new CommandLine.RunLast().execute(parseResult);
        });
        CommandLine.IParameterExceptionHandler usage = cl.getParameterExceptionHandler();
        cl.setParameterExceptionHandler((ex, given) -> {
            if (ex.getCause() instanceof OptionValueError refused) {
                ex.getCommandLine().getErr().println("runjob: " + refused.getMessage());
                return ExitCode.INVALID;
            }
            Optional<String> hint = EntrypointArgsHint.of(ex, args); // all of them, the command named too
            if (hint.isEmpty()) {
                if (!alone && ex.getCommandLine() == cl) {
                    // the usage printed with the error lists every command
                    subcommands.forEach((name, make) -> {
                        if (!cl.getSubcommands().containsKey(name)) {
                            cl.addSubcommand(name, make.get());
                        }
                    });
                }
                return usage.handleParseException(ex, given);
            }
            ex.getCommandLine().getErr().println("runjob: " + hint.get());
            return ExitCode.INVALID;
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
        int code = cl.execute(rest);
        io.out().flush();
        io.err().flush();
        return code;
    }
}
