package org.runjob.node;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.runjob.agent.Watchdog;
import org.runjob.spec.NodeSpec;

/**
 * Nodes on this machine ({@code local: true}, or a backend's nodes that are processes here): every
 * node it is asked for is reached here, whatever its address. Each program runs as a child process of runjob, in a
 * session of its own (so a Ctrl-C on the terminal reaches only runjob, which decides what stops),
 * with the job's environment and two additions:
 * <ol>
 *   <li>{@value #JAVA_VARIABLE} names this process's java, so the agent runs on the JVM runjob
 *       runs on even when that java is not on the PATH;</li>
 *   <li>{@code HOME}, when the environment has neither it nor {@code XDG_CACHE_HOME}: the agent jar
 *       is cached under it, as on any node.</li>
 * </ol>
 * Closing a program, or the cluster, closes its pipes: a program that reads its stdin (an agent)
 * then ends as it does when an SSH channel closes. {@link NodeProcess#kill} kills it and its
 * descendants.
 */
public final class LocalCluster implements Cluster {

    /** Read (and unset) by the agent bootstrap: the java to use on this node. */
    public static final String JAVA_VARIABLE = "RUNJOB_JAVA";

    private static final Path SETSID = Path.of("/usr/bin/setsid");

    private final Map<String, String> env;
    private final List<Process> started = new CopyOnWriteArrayList<>();

    public LocalCluster(Map<String, String> env) {
        Map<String, String> e = new HashMap<>(env);
        ProcessHandle.current().info().command().ifPresent(java -> e.put(JAVA_VARIABLE, java));
        if (!e.containsKey("HOME") && !e.containsKey("XDG_CACHE_HOME")) {
            e.put("HOME", System.getProperty("user.home"));
        }
        this.env = Map.copyOf(e);
    }

    @Override
    public NodeAccess node(NodeSpec node) {
        return new LocalNode();
    }

    /** How long {@link #close} waits for the node programs it let go of to finish. */
    private static final long EXIT_WAIT_MS = 2000;

    /**
     * Lets go of every node program (as a dropped SSH channel would), then waits up to
     * {@value #EXIT_WAIT_MS} ms for them to finish: a watchdog that outlived its agent sweeps what
     * the agent left and installs the class-data archive in the cache, and runjob returns once it
     * has, not while it still writes there.
     */
    @Override
    public void close() {
        started.forEach(LocalCluster::letGo);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(EXIT_WAIT_MS);
        for (Process p : started) {
            try {
                p.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static void letGo(Process p) {
        for (Closeable c : List.<Closeable>of(p.getOutputStream(), p.getInputStream())) {
            try {
                c.close();
            } catch (IOException e) {
                // closed already
            }
        }
    }

    private static void kill(Process p) {
        Watchdog.end(p.toHandle());
    }

    private final class LocalNode implements NodeAccess {

        @Override
        public String reach() {
            return "local";
        }

        @Override
        public NodeProcess start(List<String> argv, OutputStream stderr, int timeoutMs) throws NodeException {
            List<String> cmd = new ArrayList<>();
            if (Files.isExecutable(SETSID)) {
                cmd.add(SETSID.toString());
            }
            cmd.addAll(argv);
            ProcessBuilder pb = new ProcessBuilder(cmd);
            pb.environment().clear();
            pb.environment().putAll(env);
            Process p;
            try {
                p = pb.start();
            } catch (IOException e) {
                throw new NodeException("cannot start " + argv.get(0) + ": " + e.getMessage(), e);
            }
            started.add(p);
            Thread err = new Thread(() -> copy(p.getErrorStream(), stderr), "local-stderr-" + p.pid());
            err.setDaemon(true);
            err.start();
            return NodeProcess.of(p.getInputStream(), p.getOutputStream(), () -> letGo(p), () -> kill(p));
        }

        @Override
        public Optional<String> address() {
            return Optional.empty();
        }

        @Override
        public boolean onThisMachine() {
            return true;
        }
    }

    private static void copy(InputStream from, OutputStream to) {
        try (from) {
            from.transferTo(to);
        } catch (IOException e) {
            // the program ended
        }
    }
}
