package org.runjob.serve;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

import org.runjob.json.Json;
import org.runjob.node.Cluster;
import org.runjob.node.NodeException;
import org.runjob.preflight.GpuPick;
import org.runjob.protocol.GpuInventory;
import org.runjob.protocol.GpuWatch;
import org.runjob.run.Io;
import org.runjob.run.Launch;
import org.runjob.session.Interrupts;
import org.runjob.session.NodeSession;
import org.runjob.session.NodeStarter;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * One server's GPUs, watched while the page asks: on the first ask a thread reaches the server
 * as a run would (its job's SSH settings), starts an agent, probes its GPUs (model, memory, the
 * processes on them) and has the agent sample them every interval ({@link GpuWatch}); the latest
 * sample is kept. When nobody asked for {@code idleMs} the agent is ended (the thread waits for
 * the next ask); a server that cannot be reached is shown with why and tried again after
 * {@value #RETRY_MS} ms.
 */
final class ServerWatch implements AutoCloseable {

    static final long RETRY_MS = 15_000;

    /** What the page shows of the server now. */
    record State(String state, Optional<String> why, Optional<GpuInventory> inventory, Optional<JsonNode> sample, Optional<Instant> sampled) {
        static State of(String state) {
            return new State(state, Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());
        }
    }

    private final Servers.Target target;
    private final Map<String, String> env;
    private final int intervalMs;
    private final long idleMs;
    private volatile State state = State.of("idle");
    private volatile long askedAt;
    private volatile boolean closed;
    private Thread thread;

    ServerWatch(Servers.Target target, Map<String, String> env, int intervalMs, long idleMs) {
        this.target = target;
        this.env = env;
        this.intervalMs = intervalMs;
        this.idleMs = idleMs;
    }

    Servers.Target target() {
        return target;
    }

    /** The state now; starts the watch when it is not running. */
    synchronized State ask() {
        askedAt = System.nanoTime();
        if (thread == null || !thread.isAlive()) {
            if (state.state().equals("idle")) {
                state = State.of("connecting");
            }
            thread = new Thread(this::loop, "serve-watch-" + target.name());
            thread.setDaemon(true);
            thread.start();
        }
        return state;
    }

    private boolean wanted() {
        return !closed && System.nanoTime() - askedAt < idleMs * 1_000_000L;
    }

    private void loop() {
        while (wanted()) {
            try {
                watch();
            } catch (IOException | NodeException | RuntimeException e) {
                state = new State("unreachable", Optional.of(e.getMessage() == null ? e.toString() : e.getMessage()), Optional.empty(),
                        Optional.empty(), Optional.empty());
                pause(RETRY_MS);
            }
        }
        if (!state.state().equals("unreachable")) {
            state = State.of("idle");
        }
    }

    private void watch() throws IOException, NodeException {
        PrintStream quiet = new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8);
        Io io = new Io(quiet, quiet, env, Clock.systemUTC(), () -> 0, false, Interrupts.none());
        try (Cluster cluster = Launch.open(target.backend(), target.spec(), io)) {
            NodeStarter starter = new NodeStarter(target.spec(), cluster, env, Optional.empty());
            starter.reach(target.node());
            try (NodeSession session = starter.start(target.node())) {
                session.hello(60_000);
                GpuInventory inventory = session.gpus();
                if (inventory.gpus().isEmpty()) {
                    state = new State("no GPUs", inventory.unavailable(), Optional.of(inventory), Optional.empty(), Optional.empty());
                    while (wanted() && pause(RETRY_MS * 4)) {
                        // nothing to sample: asked again later
                    }
                    return;
                }
                state = new State("up", Optional.empty(), Optional.of(inventory), Optional.empty(), Optional.empty());
                Thread watcher = Thread.currentThread();
                Thread idle = new Thread(() -> {
                    while (wanted() && pause(1000)) {
                        // the page still asks
                    }
                    watcher.interrupt();
                }, "serve-idle-" + target.name());
                idle.setDaemon(true);
                idle.start();
                session.watchGpus(new GpuWatch(intervalMs, GpuPick.slots(inventory.gpus())), line -> sampled(inventory, line));
                Thread.interrupted(); // ended by the idle check: not an interrupt of what follows
                idle.interrupt();
            }
        }
    }

    private void sampled(GpuInventory inventory, String line) {
        try {
            JsonNode sample = Json.MAPPER.readTree(line);
            if (sample.has("none")) {
                state = new State("no GPUs", Optional.of(sample.path("none").asString()), Optional.of(inventory), Optional.empty(), Optional.empty());
                return;
            }
            Optional<Instant> at;
            try {
                at = Optional.of(Instant.parse(sample.path("time").asString("")));
            } catch (RuntimeException e) {
                at = Optional.empty();
            }
            state = new State("up", Optional.empty(), Optional.of(inventory), Optional.of(sample), at);
        } catch (JacksonException e) {
            // not a sample: the last one stays
        }
    }

    /** Sleeps; false when interrupted or closed. */
    private boolean pause(long ms) {
        long end = System.nanoTime() + ms * 1_000_000L;
        while (!closed && System.nanoTime() < end) {
            try {
                Thread.sleep(Math.min(200, ms));
            } catch (InterruptedException e) {
                return false;
            }
        }
        return !closed;
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (thread != null) {
            thread.interrupt();
        }
    }
}
