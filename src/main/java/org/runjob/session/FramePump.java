package org.runjob.session;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.runjob.protocol.Exit;
import org.runjob.protocol.Frame;
import org.runjob.protocol.MetricsChunk;
import org.runjob.protocol.NodeFacts;
import org.runjob.protocol.Printable;
import org.runjob.protocol.ProtocolException;
import org.runjob.protocol.Sample;
import org.runjob.protocol.Stacks;
import org.runjob.protocol.Started;

/**
 * Reads an agent's frames and puts them on the supervisor's queue as events, on its own thread.
 * The stream's end is {@link Event.AgentDone} after a DONE frame, else {@link Event.AgentLost}.
 * Remembers each worker's pid and process-tree token (from STARTED) for last-resort cleanup.
 */
final class FramePump {

    private final String node;
    private final Map<Long, String> workerTokens = new ConcurrentHashMap<>();
    private volatile BlockingQueue<Event> sink;
    private volatile NodeFacts facts;
    /** When the last frame was read, or the supervisor last took one: what a PONG keeps fresh. */
    private volatile long lastRead = System.nanoTime();
    /** True while this reader waits for the supervisor's queue, not for the agent. */
    private volatile boolean delivering;
    /** Set once nobody reads the sink any more: events are dropped, not waited on. */
    private volatile boolean discarding;

    /** @param sink where events go until {@link #redirect} */
    FramePump(String node, BlockingQueue<Event> sink) {
        this.node = node;
        this.sink = sink;
    }

    Map<Long, String> workerTokens() {
        return workerTokens;
    }

    /** The facts of the agent's HELLO, once it came. */
    NodeFacts facts() {
        return facts;
    }

    /** From now on events go to {@code to}; what is waiting in the old sink, replies aside, moves along in order. */
    synchronized void redirect(BlockingQueue<Event> to) {
        BlockingQueue<Event> old = sink;
        sink = to;
        Event e;
        while ((e = old.poll()) != null) {
            if (!(e instanceof Event.Reply) && !(e instanceof Event.Hello)) {
                put(to, e);
            }
        }
    }

    /**
     * Puts {@code e} on the current sink, waiting while it is full: a bounded queue then stops this
     * reader, the SSH window or pipe fills, and the agent's spool (memory, then disk) holds the
     * output. The wait holds no lock, so {@link #redirect} can move a full sink's events on; an
     * event that landed in the old sink after the move follows them into the new one.
     */
    private void deliver(Event e) {
        delivering = true;
        boolean interrupted = false;
        try {
            BlockingQueue<Event> to = sink;
            while (!discarding) {
                boolean taken;
                try {
                    taken = to.offer(e, 100, TimeUnit.MILLISECONDS);
                } catch (InterruptedException ex) {
                    interrupted = true;
                    taken = false;
                }
                if (taken) {
                    synchronized (this) {
                        if (to == sink || !to.removeIf(x -> x == e)) {
                            return;
                        }
                    }
                }
                to = sink;
            }
        } finally {
            lastRead = System.nanoTime();
            delivering = false;
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** From now on events are dropped: the session that read them is closed. */
    void discard() {
        discarding = true;
    }

    /**
     * True when no frame came from the agent for {@code nanos} while this reader was waiting for
     * one (time spent waiting for a full supervisor queue does not count): with a PING every few
     * seconds, a live agent's PONG ends every such wait.
     */
    boolean silentFor(long nanos) {
        return !delivering && System.nanoTime() - lastRead > nanos;
    }

    private static void put(BlockingQueue<Event> to, Event e) {
        boolean interrupted = false;
        while (true) {
            try {
                to.put(e);
                break;
            } catch (InterruptedException ex) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    void start(InputStream stream) {
        Thread t = new Thread(() -> pump(stream), "agent-" + node);
        t.setDaemon(true);
        t.start();
    }

    private void pump(InputStream stream) {
        boolean done = false;
        String reason = "its agent's stream ended: the agent exited, or the link to it broke";
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(stream, 65536))) {
            Frame f;
            while ((f = Frame.readFrom(in)) != null) {
                lastRead = System.nanoTime();
                switch (f.type()) {
                    case HELLO -> {
                        facts = NodeFacts.decode(f.payload());
                        deliver(new Event.Hello(node));
                    }
                    case REPLY -> deliver(new Event.Reply(node, f.payload()));
                    case ERROR_FILE -> deliver(new Event.ErrorFile(node, f.rank(), Printable.text(new String(f.payload(), StandardCharsets.UTF_8))));
                    case NOTICE -> deliver(new Event.Notice(node, Printable.text(new String(f.payload(), StandardCharsets.UTF_8))));
                    case STARTED -> {
                        Started started = Started.decode(f.payload());
                        workerTokens.put(started.pid(), started.token());
                        deliver(new Event.Started(node, f.rank(), started.pid()));
                    }
                    case METRICS -> {
                        MetricsChunk chunk = MetricsChunk.decode(f.payload());
                        deliver(new Event.Metrics(node, f.rank(), Instant.ofEpochMilli(chunk.readMillis()), chunk.lines(), chunk.skippedBytes()));
                    }
                    case SAMPLE -> {
                        Sample sample = Sample.decode(f.payload());
                        deliver(new Event.Sample(node, sample.source(), sample.line()));
                    }
                    case STDOUT -> deliver(new Event.Output(node, f.rank(), false, f.payload()));
                    case STDERR -> deliver(new Event.Output(node, f.rank(), true, f.payload()));
                    case EXITED -> deliver(Event.Exited.of(node, f.rank(), Exit.Report.decode(f.payload())));
                    case STACK -> {
                        Stacks.Answer a = Stacks.Answer.decode(f.payload());
                        deliver(new Event.Stack(node, f.rank(), a.id(), Printable.text(a.text())));
                    }
                    case OUTPUT_DATA -> deliver(new Event.OutputData(node, f.rank(), f.payload()));
                    case DONE -> done = true;
                    case PONG -> { } // its arrival is what counts: lastRead
                    default -> throw new ProtocolException("a " + f.type() + " frame goes to an agent, not to the coordinator");
                }
            }
        } catch (ProtocolException | IllegalArgumentException e) {
            reason = "its agent sent a bad frame: " + e.getMessage();
        } catch (IOException e) {
            reason = "the connection to its agent broke: " + e.getMessage();
        }
        deliver(done ? new Event.AgentDone(node) : new Event.AgentLost(node, reason));
    }
}
