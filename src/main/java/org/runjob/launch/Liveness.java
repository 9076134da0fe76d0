package org.runjob.launch;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.protocol.Frame;
import org.runjob.session.AgentChannel;

/**
 * The heartbeat, apart from everything else the supervisor does: on a thread of its own it sends
 * every watched agent a PING each {@code everyMs} and finds the agents that sent nothing for the
 * heartbeat timeout since it began to watch them. Nothing the supervisor does with output (a
 * console that stops reading, a slow disk, a busy CPU) delays a PING, so an agent never stops its
 * workers because runjob fell behind; and an agent is judged silent only over time it was asked
 * ({@link #watch} starts its clock), so an attempt's slow start on another node never counts
 * against it. An agent silent for half the timeout is suspected, once ({@code suspect}): its node
 * can then be tried on a connection of its own while the timeout runs out, so the evidence of a
 * lost node is ready about when its silence ends the attempt.
 *
 * <p>The supervisor takes the silent nodes with {@link #silent} and acts on them on its own thread.
 */
final class Liveness implements AutoCloseable {

    private static final Logger LOG = LogManager.getLogger(Liveness.class);

    private final long timeoutNanos;
    private final LongSupplier clock;
    private final Map<String, Watched> watched = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<AgentChannel> silent = new ConcurrentLinkedQueue<>();
    private final Set<String> suspected = ConcurrentHashMap.newKeySet();
    private final Consumer<String> suspect;
    private final ScheduledExecutorService thread;

    private record Watched(AgentChannel channel, long since) {
    }

    /**
     * Starts the heartbeat thread: a PING every {@code everyMs}, silence after {@code timeoutMs}.
     *
     * @param suspect told, on the heartbeat thread, the node of an agent silent for half the timeout; it must not block
     */
    Liveness(long everyMs, long timeoutMs, Consumer<String> suspect) {
        this(timeoutMs, System::nanoTime, suspect);
        thread.scheduleWithFixedDelay(this::beat, everyMs, everyMs, TimeUnit.MILLISECONDS);
    }

    /** For tests: no thread; {@link #beat} is called by hand on the given clock. */
    Liveness(long timeoutMs, LongSupplier clock, Consumer<String> suspect) {
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        this.clock = clock;
        this.suspect = suspect;
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "heartbeat");
            t.setDaemon(true);
            return t;
        });
    }

    /** Pings {@code channel} from now on; its silence is counted from now. */
    void watch(AgentChannel channel) {
        suspected.remove(channel.node());
        watched.put(channel.node(), new Watched(channel, clock.getAsLong()));
    }

    /** Stops pinging the node's agent (it finished, or was closed). */
    void forget(String node) {
        watched.remove(node);
    }

    /** The agents found silent since the last call, each once; they are no longer watched. */
    List<AgentChannel> silent() {
        List<AgentChannel> out = new ArrayList<>();
        AgentChannel c;
        while ((c = silent.poll()) != null) {
            out.add(c);
        }
        return out;
    }

    /** One beat: a PING to every watched agent, then the ones silent for the timeout since they were watched. */
    void beat() {
        long now = clock.getAsLong();
        for (Watched w : List.copyOf(watched.values())) {
            try {
                w.channel().send(Frame.of(Frame.Type.PING));
            } catch (IOException e) {
                LOG.debug("node {}: cannot send PING: {}", w.channel().node(), e.getMessage());
            }
            String node = w.channel().node();
            long half = timeoutNanos / 2;
            if (now - w.since() > half && w.channel().silentFor(half) && suspected.add(node)) {
                suspect.accept(node);
            }
            if (now - w.since() > timeoutNanos && w.channel().silentFor(timeoutNanos) && watched.remove(node, w)) {
                silent.add(w.channel());
            }
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
        watched.clear();
    }
}
