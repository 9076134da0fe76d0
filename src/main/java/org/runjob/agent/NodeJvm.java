package org.runjob.agent;

import java.util.ArrayList;
import java.util.List;

/**
 * The command line of runjob's node side ({@code agent}, {@code probe ...}): a short-lived, small
 * JVM (serial GC, C1 only, class-data sharing) running the CLI's main class, for every place that
 * starts one, locally or on a node.
 */
public final class NodeJvm {

    static final String MAIN = "org.runjob.cli.Main";

    private NodeJvm() {
    }

    /** {@code java FLAGS -cp CLASSPATH org.runjob.cli.Main ARGS...} */
    public static List<String> argv(String java, String classPath, String... args) {
        return argv(java, List.of(), classPath, args);
    }

    /** The same with more JVM options ({@code -Dname=value}, say) after the flags. */
    public static List<String> argv(String java, List<String> options, String classPath, String... args) {
        List<String> argv = new ArrayList<>(List.of(java, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto"));
        argv.addAll(options);
        argv.addAll(List.of("-cp", classPath, MAIN));
        argv.addAll(List.of(args));
        return argv;
    }

    /** The same, on this machine, with this process's java and class path. */
    public static List<String> local(String... args) {
        return argv(ProcessHandle.current().info().command().orElse("java"), System.getProperty("java.class.path"), args);
    }
}
