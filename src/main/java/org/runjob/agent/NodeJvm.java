package org.runjob.agent;

import java.util.ArrayList;
import java.util.List;

/**
 * The command line of runjob's node side ({@code agent}, {@code probe ...}): a short-lived, small
 * JVM (serial GC, C1 only unless {@link Jit#FULL}, class-data sharing) running the CLI's main class,
 * for every place that starts one, locally or on a node.
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

    static final String MAIN = "org.runjob.cli.Main";

    private NodeJvm() {
    }

    /** {@code java FLAGS OPTIONS -cp CLASSPATH org.runjob.cli.Main ARGS...}, C1 only; {@code options} ({@code -Dname=value}, say) after the flags. */
    public static List<String> argv(String java, List<String> options, String classPath, String... args) {
        return argv(java, Jit.QUICK.flag, options, classPath, args);
    }

    /**
     * The same with {@code compilers}: a {@link Jit}'s flag, or (in the bootstrap's constant text)
     * the shell word that holds one.
     */
    public static List<String> argv(String java, String compilers, List<String> options, String classPath, String... args) {
        List<String> argv = new ArrayList<>(List.of(java, "-XX:+UseSerialGC", compilers, "-Xshare:auto"));
        argv.addAll(options);
        argv.addAll(List.of("-cp", classPath, MAIN));
        argv.addAll(List.of(args));
        return argv;
    }
}
