package org.runjob.runs;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.runjob.distribute.AgentBundle;
import org.runjob.logs.RunFolder;
import org.runjob.protocol.NodeJvm;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.Jobs;
import org.runjob.run.RunIds;
import org.runjob.run.RunJob;
import org.runjob.run.RunState;
import org.runjob.session.PinnedJar;
import org.runjob.spec.SpecLoader;

/**
 * {@code runjob FILE --detach}: the run goes on in a runjob of its own, in a new session (no
 * terminal, stdin from /dev/null, output to the run folder's {@code console.log}), so closing the
 * terminal does not touch it. This process waits, printing what that runjob prints, until the
 * workers run (then it returns 0 with the run's id and the commands that reach it) or that runjob
 * ends first (then it returns its exit code: 3 for a failed preflight, as in the foreground).
 *
 * <p>The detached runjob lives on this machine: this machine must stay up (and awake) for the run;
 * the nodes' agents stop their workers when its heartbeats stop.
 */
public final class Detach {

    private Detach() {
    }

    public static int start(Io io, String file, List<String> sets, List<String> args, List<String> originalArgs) throws IOException,
            InterruptedException {
        SpecLoader.Loaded loaded = Jobs.load(io, file, sets, args);
        if (loaded == null) {
            return ExitCode.INVALID;
        }
        Path jobLogs = Path.of(loaded.spec().logsDir()).resolve(loaded.spec().name());
        String runId;
        try {
            runId = RunIds.claim(io, jobLogs);
        } catch (RunIds.NotCreated e) {
            io.err().println("runjob: cannot create the run folder " + e.folder + " (logs.dir " + loaded.spec().logsDir() + "): "
                    + RunJob.why(e.reason));
            return ExitCode.INVALID;
        }
        Path folder = jobLogs.resolve(runId);
        Path console = folder.resolve(RunFolder.CONSOLE_LOG);
        List<String> childArgs = new ArrayList<>(List.of("--run-id", runId));
        childArgs.addAll(childArgs(originalArgs));
        Process child = spawn(io, childArgs, console);
        long shown = 0;
        while (true) {
            boolean exited = child.waitFor(100, TimeUnit.MILLISECONDS);
            shown = show(io.err(), console, shown);
            if (exited) {
                int code = child.exitValue();
                if (code == ExitCode.INVALID) {
                    RunJob.removeRefused(folder); // its output was shown here; a refused run leaves no run behind
                }
                return code;
            }
            String state = RunRecords.read(folder, io.env()).status().map(s -> s.path("state").asString("")).orElse("");
            if (RunState.LAUNCHED.contains(state)) {
                String logs = loaded.spec().logsDir().equals("runs") ? "" : " --logs-dir " + loaded.spec().logsDir();
                io.err().println("runjob: run " + runId + " is detached (runjob pid " + child.pid() + " on this machine, which must stay up);"
                        + " its output goes to " + folder);
                Jobs.handedOver(io, runId, logs);
                return ExitCode.OK;
            }
            if (io.interrupts().count() > 0) {
                io.err().println("runjob: no longer waiting; run " + runId + " goes on (runjob stop " + runId + " stops it)");
                return ExitCode.INTERRUPTED;
            }
        }
    }

    /**
     * Starts {@code runjob ARGS} to live on its own: in a new session (no terminal), stdin from
     * /dev/null, stdout and stderr to {@code console}, on this JVM's runtime and flags and the
     * content-pinned jar, with runjob's environment.
     */
    static Process spawn(Io io, List<String> args, Path console) throws IOException {
        List<String> cmd = new ArrayList<>();
        if (Files.isExecutable(Path.of("/usr/bin/setsid"))) {
            cmd.add("/usr/bin/setsid");
        }
        cmd.addAll(runjob(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectInput(new File("/dev/null"))
                .redirectOutput(console.toFile()).redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(io.env());
        return pb.start();
    }

    /**
     * {@code runjob ARGS} as a runjob that lives on its own starts (detached here, or as a queued
     * batch step): this JVM's java and flags ({@link #jvmFlags}) and the content-pinned jar
     * ({@link #classPath}).
     */
    static List<String> runjob(List<String> args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java")));
        cmd.addAll(jvmFlags(ManagementFactory.getRuntimeMXBean().getInputArguments()));
        cmd.addAll(List.of("-cp", classPath(), NodeJvm.RUNJOB_MAIN));
        cmd.addAll(args);
        return cmd;
    }

    /**
     * The launcher's JVM flags, for the detached runjob that lives for hours: the collector, heap
     * and class-data flags {@code bin/runjob} chose (and RUNJOB_JAVA_OPTS), less those that only
     * make sense once (writing a class-data archive) or attach a tool.
     */
    static List<String> jvmFlags(List<String> launcher) {
        return launcher.stream().filter(f -> !f.startsWith("-XX:ArchiveClassesAtExit") && !f.startsWith("-javaagent")
                && !f.startsWith("-agentlib") && !f.startsWith("-agentpath") && !f.startsWith("-Xrunjdwp")).toList();
    }

    /**
     * The class path of a runjob started to live on its own (detached here, or queued as a batch
     * job): the content-pinned copy of the jar this process runs from ({@link PinnedJar}), so a
     * rebuild of {@code target/runjob.jar} does not change the runjob a run lives in; this
     * process's class path when it runs from class directories (tests).
     */
    static String classPath() throws IOException {
        return AgentBundle.runsFromJar() ? PinnedJar.runjob().path().toString() : System.getProperty("java.class.path");
    }

    /** The detached runjob's arguments: the same command, without --detach (and without the word run). */
    static List<String> childArgs(List<String> originalArgs) {
        List<String> out = new ArrayList<>();
        boolean afterDashes = false;
        for (int i = 0; i < originalArgs.size(); i++) {
            String a = originalArgs.get(i);
            if (!afterDashes && (a.equals("--detach") || (i == 0 && a.equals("run")))) {
                continue;
            }
            afterDashes |= a.equals("--");
            out.add(a);
        }
        return out;
    }

    /**
     * Copies what a runjob in the background wrote to its console since byte {@code from}
     * (preflight's table, its errors) to {@code out}, bytes as they are; returns the new position.
     */
    static long show(PrintStream out, Path console, long from) throws IOException {
        if (!Files.exists(console)) {
            return from;
        }
        try (FileChannel in = FileChannel.open(console, StandardOpenOption.READ)) {
            long end = in.size();
            if (end > from) {
                in.transferTo(from, end - from, Channels.newChannel(out));
                out.flush();
            }
            return Math.max(from, end);
        }
    }
}
