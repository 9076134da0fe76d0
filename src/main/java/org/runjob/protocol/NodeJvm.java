package org.runjob.protocol;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * The command line of a JVM runjob starts beside itself or on a node: a small one (serial GC, C1 only
 * unless {@link Jit#FULL}, class-data sharing) running the agent artifact's main class
 * ({@link #AGENT_MAIN}: one of {@link #COMMANDS}) or, where a whole runjob runs there (a submitted
 * run's coordinator), runjob's own. Both sides build it from here: the coordinator in the
 * bootstrap, the node when it starts a JVM of its own.
 */
public final class NodeJvm {

    /**
     * Which compilers an agent's JVM uses. C1 alone starts and runs a short agent in about 0.15
     * CPU-s less; but only C2 uses the CPU's SHA-256 instructions, and an agent hashes every file it
     * receives: 100 MiB took 0.9 s under C1 and 0.07 s under C2 (measured on the 2-core bench
     * machine). So an agent that receives much runs both.
     */
    public enum Jit {
        QUICK("-XX:TieredStopAtLevel=1"), FULL("-XX:TieredStopAtLevel=4");

        /** Jobs that ship at least this much get {@link #FULL}. */
        public static final long FULL_FROM_BYTES = 8L << 20;

        public final String flag;

        Jit(String flag) {
            this.flag = flag;
        }

        public static Jit forShipping(long bytes) {
            return bytes >= FULL_FROM_BYTES ? FULL : QUICK;
        }
    }

    /** The node side's main class, in the agent artifact and in runjob's jar alike. */
    public static final String AGENT_MAIN = "org.runjob.agent.AgentMain";
    /** runjob's own main class, only in runjob's jar. */
    public static final String RUNJOB_MAIN = "org.runjob.cli.Main";

    /** A node agent, speaking frames on stdin and stdout. */
    public static final String AGENT = "agent";
    /** The agent's GPU probe child. */
    public static final String PROBE = "probe";
    /** A submitted run's node host: its start, then the host itself. */
    public static final String HOST_START = "host-start";
    public static final String HOST = "host";
    /** After {@code agent --jar SHA}: what follows is a command, not an agent's options. */
    public static final String THEN = "--then";
    /** The commands the node side's main class runs. */
    public static final Set<String> COMMANDS = Set.of(AGENT, PROBE, HOST_START, HOST);

    private NodeJvm() {
    }

    /** {@code args} less a leading {@code agent --jar SHA --then}; {@code args} itself when it has none. */
    public static String[] afterThen(String[] args) {
        return args.length >= 4 && args[0].equals(AGENT) && args[3].equals(THEN) ? Arrays.copyOfRange(args, 4, args.length) : args;
    }

    /** {@code java FLAGS OPTIONS -cp CLASSPATH AgentMain ARGS...}, C1 only; {@code options} ({@code -Dname=value}, say) after the flags. */
    public static List<String> argv(String java, List<String> options, String classPath, String... args) {
        return argv(java, Jit.QUICK.flag, options, classPath, AGENT_MAIN, args);
    }

    /**
     * The same with {@code compilers} and {@code main}: a {@link Jit}'s flag and a main class, or (in
     * the bootstrap's constant text) the shell words that hold them.
     */
    public static List<String> argv(String java, String compilers, List<String> options, String classPath, String main, String... args) {
        List<String> argv = new ArrayList<>(List.of(java, "-XX:+UseSerialGC", compilers, "-Xshare:auto"));
        argv.addAll(options);
        argv.addAll(List.of("-cp", classPath, main));
        argv.addAll(List.of(args));
        return argv;
    }
}
