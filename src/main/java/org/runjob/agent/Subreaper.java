package org.runjob.agent;

import java.util.Map;
import java.util.Optional;

import com.sun.jna.Library;
import com.sun.jna.Native;

/**
 * This process as a child subreaper ({@code prctl(PR_SET_CHILD_SUBREAPER)}, Linux 3.4+): a process
 * that leaves a worker's tree (double fork, {@code setsid}, a cleared environment) is re-parented to
 * the agent instead of init, so it stays among the agent's descendants and is stopped with the job.
 * The agent reaps such adopted children itself ({@link #reap}); the JVM waits only for those it
 * started.
 */
final class Subreaper {

    private static final int PR_SET_CHILD_SUBREAPER = 36;
    private static final int WNOHANG = 1;

    /** libc's prctl and waitpid, through JNA. */
    interface LibC extends Library {
        int prctl(int option, long arg2, long arg3, long arg4, long arg5);

        int waitpid(int pid, int[] status, int options);
    }

    /** Set to 1 by the watchdog when it made the agent a subreaper before the agent started. */
    static final String VARIABLE = "RUNJOB_SUBREAPER";

    private static volatile LibC libc;
    private static volatile boolean active;

    private Subreaper() {
    }

    /**
     * Makes this process a subreaper unless {@code env} says it is one already; empty on success,
     * else why not (the agent then tracks by tree and token alone).
     */
    static Optional<String> become(Map<String, String> env) {
        if ("1".equals(env.get(VARIABLE))) {
            active = true;
            return Optional.empty();
        }
        try {
            LibC c = libc();
            if (c.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
                return Optional.of("prctl(PR_SET_CHILD_SUBREAPER) failed, errno " + Native.getLastError());
            }
            active = true;
            return Optional.empty();
        } catch (LinkageError | RuntimeException e) {
            return Optional.of("no native access for prctl: " + e.getMessage());
        }
    }

    static boolean active() {
        return active;
    }

    /** Collects an adopted child that has exited (a zombie), without waiting; loads libc on first use. */
    static void reap(long pid) {
        if (!active) {
            return;
        }
        try {
            libc().waitpid((int) pid, null, WNOHANG);
        } catch (LinkageError | RuntimeException e) {
            // no native access: the zombie waits for the agent's exit, when init collects it
        }
    }

    private static LibC libc() {
        LibC c = libc;
        if (c == null) {
            c = Native.load("c", LibC.class);
            libc = c;
        }
        return c;
    }
}
