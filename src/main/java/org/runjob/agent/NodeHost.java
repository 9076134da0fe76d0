package org.runjob.agent;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.runjob.protocol.HostRecords;
import org.runjob.protocol.NodeJvm;
import org.runjob.protocol.SecureLink;

/**
 * A submitted run's node host: what a node keeps of a run that no longer has an SSH login to it
 * ({@code runjob submit}). It starts programs (the agent bootstrap) for the run's coordinator,
 * which runs on the master node, and carries their stdin, stdout and stderr over one
 * {@link SecureLink} per program ({@link HostRecords}), as one SSH exec channel would.
 *
 * <ol>
 *   <li>{@code host-start RUN} (through the bootstrap, over SSH): reads the node's key as one line
 *       from stdin, starts {@code host RUN} in a session of its own (no terminal, no SSH channel)
 *       and hands the secret on through a pipe; prints {@value HostRecords#LISTENING}PORT once that
 *       host listens, and exits.</li>
 *   <li>{@code host RUN}: listens on every address of the node, on a port the kernel picks; serves
 *       any client that proves it holds the node's key. It ends on {@link HostRecords#STOP}, or once
 *       nothing of the run has run on it, no coordinator holds it ({@link HostRecords.Type#HOLD}), and no client has come, for {@link #IDLE_MS}
 *       ({@link #FIRST_CLIENT_MS} before its first client): the coordinator is gone (its agents
 *       stop their workers when its heartbeats stop, and their programs' ends free the host).</li>
 * </ol>
 * A connection has {@link #HANDSHAKE_MS} in all to prove the secret and send its first record
 * (a deadline, not a per-read timeout); at most {@link #MAX_PENDING} may be in that state (the
 * oldest is dropped for a new one) and at most {@link #MAX_CLIENTS} are served at once. Only
 * connections that proved the secret count as activity for {@link #IDLE_MS}. When a program
 * exits, its connection is closed after its EXIT record, so a client that went silent (its
 * node lost power) does not keep the host.
 * Programs get the host's environment (the SSH login's) without runjob's own variables.
 */
public final class NodeHost {

    /**
     * How long a host that has served its coordinator waits, with nothing running and no client,
     * before it ends: the coordinator's heartbeat timeout (15 s, after which its agents stop their
     * workers) and 5 s more. A run's coordinator holds every host of the run for as long as it
     * runs ({@link HostRecords.Type#HOLD}, sent every few seconds), spares that run nothing included.
     */
    static final long IDLE_MS = Long.getLong("runjob.host.idle.ms", 20_000);
    /** How long a new host waits for its coordinator's first connection (it starts on the master node after the hosts). */
    static final long FIRST_CLIENT_MS = Long.getLong("runjob.host.first.ms", 120_000);
    /** How long a client has, in all, to prove the secret and say what it wants: a deadline, as OpenSSH's LoginGraceTime. */
    static final int HANDSHAKE_MS = Integer.getInteger("runjob.host.handshake.ms", 10_000);
    /** Clients served at once: a run has a few programs per node; more is someone else. */
    static final int MAX_CLIENTS = 64;
    /** Connections still in their handshake; past it the oldest is dropped, so a new one (the coordinator's) gets its turn. */
    static final int MAX_PENDING = 16;

    private final byte[] secret;
    private final ServerSocket server;
    private final AtomicInteger busy = new AtomicInteger();
    private final Deque<Socket> pending = new ArrayDeque<>();
    private final ScheduledExecutorService deadlines = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "host-deadlines");
        t.setDaemon(true);
        return t;
    });
    private volatile long lastBusy = System.nanoTime();
    private volatile boolean served;
    private volatile boolean stopped;

    private NodeHost(byte[] secret, ServerSocket server) {
        this.secret = secret;
        this.server = server;
    }

    /** {@code host-start RUN}: starts the host and says its port; 0 when it listens. */
    public static int start(List<String> args, InputStream in, PrintStream out) {
        if (args.size() != 1) {
            System.err.println("runjob host-start: needs the run id");
            return 2;
        }
        try {
            String line = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII)).readLine();
            SecureLink.secret(line == null ? "" : line);
            String java = ProcessHandle.current().info().command().orElse("java");
            List<String> cmd = new ArrayList<>();
            if (Files.isExecutable(Path.of("/usr/bin/setsid"))) {
                cmd.add("/usr/bin/setsid");
            }
            cmd.addAll(NodeJvm.argv(java, List.of(), System.getProperty("java.class.path"), "host", args.get(0)));
            Path log = logFile(args.get(0));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
            Map<String, String> env = pb.environment();
            env.keySet().removeIf(k -> k.startsWith("RUNJOB_"));
            Process host = pb.start();
            try (OutputStream secretPipe = host.getOutputStream()) {
                secretPipe.write((line.trim() + "\n").getBytes(StandardCharsets.US_ASCII));
            }
            String said = new BufferedReader(new InputStreamReader(host.getInputStream(), StandardCharsets.US_ASCII)).readLine();
            if (said == null || !said.startsWith(HostRecords.LISTENING)) {
                System.err.println("runjob host-start: the node host did not start (see " + log + ")");
                return 1;
            }
            out.println(said);
            out.flush();
            return 0;
        } catch (IOException | IllegalArgumentException e) {
            System.err.println("runjob host-start: " + e.getMessage());
            return 1;
        }
    }

    /** The host's own log (its JVM's errors): {@code ${XDG_CACHE_HOME:-~/.cache}/runjob/hosts/RUN.log}, mode 600. */
    private static Path logFile(String run) throws IOException {
        String cache = System.getenv("XDG_CACHE_HOME");
        Path dir = (cache == null || cache.isEmpty() ? Path.of(System.getProperty("user.home"), ".cache") : Path.of(cache))
                .resolve("runjob").resolve("hosts");
        Files.createDirectories(dir);
        Path log = dir.resolve(run.replaceAll("[^A-Za-z0-9._-]", "_") + ".log");
        if (Files.isSymbolicLink(log)) {
            throw new IOException(log + " is a symlink");
        }
        return log;
    }

    /** {@code host RUN}: reads the secret from stdin, listens, says its port on stdout, serves until it ends. */
    public static int main(List<String> args, InputStream in, PrintStream out) {
        byte[] secret;
        try {
            String line = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII)).readLine();
            secret = SecureLink.secret(line == null ? "" : line);
            in.close();
        } catch (IOException | IllegalArgumentException e) {
            System.err.println("runjob host: no secret on stdin: " + e.getMessage());
            return 2;
        }
        try (ServerSocket server = new ServerSocket(0)) {
            server.setSoTimeout(1000);
            out.println(HostRecords.LISTENING + server.getLocalPort());
            out.flush();
            out.close();
            new NodeHost(secret, server).serve();
            return 0;
        } catch (IOException e) {
            System.err.println("runjob host: " + e.getMessage());
            return 1;
        }
    }

    private void serve() throws IOException {
        while (!stopped) {
            Socket s;
            try {
                s = server.accept();
            } catch (SocketTimeoutException e) {
                long idleMs = served ? IDLE_MS : FIRST_CLIENT_MS;
                if (busy.get() == 0 && (System.nanoTime() - lastBusy) / 1_000_000 >= idleMs) {
                    System.err.println("runjob host: nothing ran and no one came for " + idleMs / 1000 + " s: ending");
                    return;
                }
                continue;
            }
            if (busy.get() >= MAX_CLIENTS) {
                s.close();
                continue;
            }
            synchronized (pending) {
                if (pending.size() >= MAX_PENDING) {
                    closeQuietly(pending.removeFirst());
                }
                pending.addLast(s);
            }
            // the whole handshake and first record within the deadline, however slowly the bytes come
            ScheduledFuture<?> deadline = deadlines.schedule(() -> closeQuietly(s), HANDSHAKE_MS, TimeUnit.MILLISECONDS);
            Thread t = new Thread(() -> handle(s, deadline), "host-client");
            t.setDaemon(true);
            t.start();
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closed already
        }
    }

    /** One connection: served only once it proved the secret and sent its first record; only then is it a client. */
    private void handle(Socket s, ScheduledFuture<?> deadline) {
        boolean counted = false;
        long heldSince = 0;
        try (SecureLink link = SecureLink.server(s.getInputStream(), s.getOutputStream(), s, secret)) {
            s.setTcpNoDelay(true);
            SecureLink.Record first = link.receive();
            if (first == null || !deadline.cancel(false)) {
                return;
            }
            synchronized (pending) {
                pending.remove(s);
            }
            busy.incrementAndGet();
            counted = true;
            served = true;
            lastBusy = System.nanoTime();
            if (first.is(HostRecords.Type.STOP)) {
                stopped = true;
                link.send(HostRecords.Type.EXIT, "0");
                return;
            }
            if (first.is(HostRecords.Type.HOLD)) {
                heldSince = hold(link, s);
                return;
            }
            if (!first.is(HostRecords.Type.EXEC)) {
                link.send(HostRecords.Type.FAILED, "expected a program to start");
                return;
            }
            run(link, HostRecords.argv(first.payload()));
        } catch (IOException e) {
            // a client that does not hold the secret, one too slow for the deadline, or one that went away
            System.err.println("runjob host: a client from " + s.getRemoteSocketAddress() + ": " + e.getMessage());
        } finally {
            deadline.cancel(false);
            synchronized (pending) {
                pending.remove(s);
            }
            if (counted) {
                // a hold that went silent was last heard from then: the idle period runs from there, not again from now
                lastBusy = heldSince != 0 ? heldSince : System.nanoTime();
                busy.decrementAndGet();
            }
        }
    }

    /**
     * A coordinator's hold: the host is busy while HOLD records keep coming, each within
     * {@link #IDLE_MS}; the connection's end, or silence that long (its coordinator lost power),
     * lets go. Returns when the last HOLD came ({@link System#nanoTime}) for a hold that went
     * silent, so the host's idle period counts from then; 0 for one whose connection ended.
     */
    private long hold(SecureLink link, Socket s) throws IOException {
        s.setSoTimeout((int) Math.min(Integer.MAX_VALUE, Math.max(1, IDLE_MS)));
        long last = System.nanoTime();
        try {
            SecureLink.Record r;
            while ((r = link.receive()) != null && r.is(HostRecords.Type.HOLD)) {
                last = System.nanoTime();
                lastBusy = last;
            }
            return 0;
        } catch (SocketTimeoutException e) {
            System.err.println("runjob host: the coordinator's hold went silent for " + IDLE_MS / 1000 + " s: letting go");
            return last;
        }
    }

    private static void run(SecureLink link, List<String> argv) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(argv);
        pb.environment().keySet().removeIf(k -> k.startsWith("RUNJOB_"));
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            link.send(HostRecords.Type.FAILED, "cannot start " + argv.get(0) + ": " + e.getMessage());
            return;
        }
        link.send(HostRecords.Type.STARTED, Long.toString(p.pid()));
        Thread out = pump(p.getInputStream(), link, HostRecords.Type.STDOUT);
        Thread err = pump(p.getErrorStream(), link, HostRecords.Type.STDERR);
        Thread exit = new Thread(() -> {
            try {
                int code = p.waitFor();
                out.join();
                err.join();
                link.send(HostRecords.Type.EXIT, Integer.toString(code));
            } catch (InterruptedException | IOException e) {
                // the client went away
            } finally {
                // the program is over, as sshd closes a channel once its program exits: a client that went silent
                // (its node lost power, a half-open connection) no longer holds this host
                link.close();
            }
        }, "host-exit-" + p.pid());
        exit.setDaemon(true);
        exit.start();
        OutputStream stdin = p.getOutputStream();
        try {
            SecureLink.Record r;
            while ((r = link.receive()) != null) {
                byte type = r.type();
                switch (r.kind().orElseThrow(() -> new IOException("unexpected record " + type))) {
                    case STDIN -> {
                        stdin.write(r.payload());
                        stdin.flush();
                    }
                    case STDIN_EOF -> stdin.close();
                    case KILL -> Watchdog.end(p.toHandle());
                    default -> throw new IOException("unexpected record " + r.type());
                }
            }
        } catch (IOException e) {
            // the client went away: let go of the program, as sshd does when a channel drops
        } finally {
            try {
                stdin.close();
            } catch (IOException e) {
                // the program ended
            }
        }
        try {
            exit.join(Math.max(1, IDLE_MS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Thread pump(InputStream from, SecureLink link, HostRecords.Type type) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[1 << 16];
            boolean carried = true;
            try (from) {
                int n;
                while ((n = from.read(buf)) > 0) {
                    if (carried) {
                        try {
                            link.send(type, Arrays.copyOf(buf, n));
                        } catch (IOException e) {
                            carried = false; // the client went away: drain, so the program never blocks on a full pipe
                        }
                    }
                }
            } catch (IOException e) {
                // the program ended
            }
        }, "host-pump-" + type);
        t.setDaemon(true);
        t.start();
        return t;
    }
}
