package org.runjob.testbed;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The command line of a runjob a test starts as a process of its own: this JVM's java with the
 * flags {@code bin/runjob} gives a user's runjob (the serial collector; C1 only for the commands
 * that only read and print, and for a dry run), then the test's own JVM options, the test class
 * path and runjob's main class. The heap cap is left to each test. A spawned runjob then costs
 * the CPU a user's does (about 1.0 CPU-s for a dry run with C1 against 1.7 with the default
 * collector and both compilers, measured on the 2-core test machine).
 */
public final class RunjobJvm {

    /** bin/runjob's commands that only read and print: C1 alone compiles them. */
    private static final Set<String> QUICK = Set.of("validate", "plan", "runs", "status", "logs", "stop", "stacks", "help", "completion",
            "-V", "--version");

    private RunjobJvm() {
    }

    /** {@code java FLAGS... -cp CLASSPATH org.runjob.cli.Main ARGS...}. */
    public static List<String> command(List<String> args) {
        return command(List.of(), args);
    }

    /** The same, with {@code jvm} options (a heap cap, a stack size) after runjob's flags. */
    public static List<String> command(List<String> jvm, List<String> args) {
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"), "-XX:+UseSerialGC"));
        if (!args.isEmpty() && QUICK.contains(args.get(0)) || args.contains("--dry-run")) {
            cmd.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1"));
        }
        cmd.addAll(jvm);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "org.runjob.cli.Main"));
        cmd.addAll(args);
        return cmd;
    }
}
