package org.runjob.session;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.runjob.node.NodeAccess;
import org.runjob.protocol.AgentOptions;
import org.runjob.protocol.Answer;
import org.runjob.protocol.EnvironmentReply;
import org.runjob.protocol.EnvironmentRequest;
import org.runjob.protocol.Frame;
import org.runjob.protocol.GpuInventory;
import org.runjob.protocol.GpuWatch;
import org.runjob.protocol.Handshake;
import org.runjob.protocol.HealthRequest;
import org.runjob.protocol.Lease;
import org.runjob.protocol.NodeFacts;
import org.runjob.protocol.NodeJvm;
import org.runjob.protocol.Outputs;
import org.runjob.protocol.PortRequest;
import org.runjob.protocol.Printable;

/**
 * One node's agent over its one channel, from its start through preflight to supervision: the
 * {@link Bootstrap} as one program on the node (a local child process, an SSH exec channel, a
 * Slurm step): one command and one JVM per node for checks, files, rendezvous probe and workers
 * alike.
 *
 * <ol>
 *   <li>{@link #hello} waits for the agent's HELLO and its {@link NodeFacts}, and refuses an agent
 *       of another protocol or jar ({@link Handshake}).</li>
 *   <li>Requests ({@link #files}: offer, send, fetch, serve; {@link #listen}, {@link #connect}, {@link #gpus}) go one at a time,
 *       each answered by one REPLY within its deadline; an agent that ends meanwhile fails the
 *       request with the reason.</li>
 *   <li>{@link #attach} hands the channel to the supervisor: its events (HELLO first) go to the
 *       supervisor's queue from then on.</li>
 *   <li>{@link #close} before that ends the agent (it exits on the end of its stdin).</li>
 * </ol>
 */
public final class NodeSession implements AutoCloseable {

    /**
     * The events read ahead of a preflight request's wait: a reader that falls behind (a console
     * that blocks while a setup prints a gigabyte) stops the agent's stream, whose spool holds the
     * rest, so runjob holds at most this many lines or output chunks of a node.
     */
    static final int INBOX = 64;

    private final String node;
    private final StreamAgentChannel channel;
    private final FramePump pump;
    private final BlockingQueue<Event> inbox;
    private final String expectedJar;
    private boolean attached;

    private NodeSession(String node, StreamAgentChannel channel, FramePump pump, BlockingQueue<Event> inbox, String expectedJar) {
        this.node = node;
        this.expectedJar = expectedJar;
        this.channel = channel;
        this.pump = pump;
        this.inbox = inbox;
    }

    /**
     * Starts an agent through the bootstrap on {@code access}'s node.
     *
     * @throws Bootstrap.Failure when the node cannot run it (no java, an untrusted cache), named
     */
    public static NodeSession start(String node, NodeAccess access, PinnedJar jar, NodeJvm.Jit jit, AgentOptions options, int timeoutMs,
                                     Map<String, String> env) throws IOException {
        BlockingQueue<Event> inbox = new LinkedBlockingQueue<>(INBOX);
        FramePump pump = new FramePump(node, inbox);
        return new NodeSession(node, NodeAgentChannel.start(node, access, jar, jit, options.args(), pump, timeoutMs, env), pump, inbox,
                jar.sha256());
    }

    /** Why a remote start failed, when the node's script said so: {@code java}, {@code cache} or {@code jar}; else empty. */
    public static Optional<String> failedCheck(IOException e) {
        return e instanceof Bootstrap.Failure f ? Optional.of(f.what) : Optional.empty();
    }

    public String node() {
        return node;
    }

    /** The agent's facts, once it said HELLO. */
    public NodeFacts hello(long timeoutMs) throws IOException {
        await(Event.Hello.class, timeoutMs, "report ready");
        NodeFacts facts = pump.facts();
        Optional<String> mismatch = Handshake.mismatch(facts, expectedJar);
        if (mismatch.isPresent()) {
            close();
            throw new IOException(mismatch.get());
        }
        return facts;
    }

    /** Sends one request and waits for its REPLY, an {@link Answer}. */
    synchronized Answer answer(Frame.Type type, byte[] payload, long timeoutMs) throws IOException {
        try {
            return Answer.decode(exchange(type, payload, timeoutMs).payload());
        } catch (IllegalArgumentException e) {
            throw new IOException("the agent answered " + type + " with no answer: " + e.getMessage());
        }
    }

    /** An answer that says the request failed, as the IOException it is. */
    static void end(Answer answer) throws IOException {
        if (!answer.ok()) {
            throw new IOException(answer.failure().get());
        }
    }

    /** Sends one frame to the agent, answered by nothing. */
    void send(Frame frame) throws IOException {
        channel.send(frame);
    }

    /** Sends one request and waits for its REPLY. */
    Event.Reply exchange(Frame.Type type, byte[] payload, long timeoutMs) throws IOException {
        channel.send(new Frame(type, -1, payload));
        return (Event.Reply) await(Event.Reply.class, timeoutMs, "answer " + type);
    }

    /**
     * Activates the node's environment, runs its setup when due and finds the workers' program
     * there ({@link org.runjob.protocol.EnvironmentRequest}); each line a setup command prints goes
     * to {@code setupLines} as it comes.
     */
    public synchronized EnvironmentReply environment(EnvironmentRequest request, Consumer<String> setupLines, long timeoutMs,
                                                     BooleanSupplier stop) throws IOException {
        channel.send(new Frame(Frame.Type.ENVIRONMENT, -1, request.encode()));
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        byte[] answer = null;
        while (answer == null) {
            if (stop.getAsBoolean()) {
                throw new IOException("interrupted: the setup under way is stopped with the agent");
            }
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            try {
                answer = ((Event.Reply) await(Event.Reply.class, Math.min(STOP_POLL_MS, Math.max(1, left)), "answer " + Frame.Type.ENVIRONMENT,
                        setupLines)).payload();
            } catch (StillWaiting e) {
                if (left <= STOP_POLL_MS) {
                    throw new IOException("the agent did not answer " + Frame.Type.ENVIRONMENT + " within " + (timeoutMs + 999) / 1000 + " s");
                }
            }
        }
        try {
            return EnvironmentReply.decode(answer);
        } catch (IllegalArgumentException e) {
            throw new IOException("the agent answered ENVIRONMENT with " + answer.length + " bytes that are no reply: " + e.getMessage());
        }
    }

    /**
     * Brings the run's outputs from the node into {@code into} (made here), at most
     * {@code maxBytes} of them, each file checked against the size and SHA-256 of the agent's
     * manifest ({@link OutputReceiver}). Returns the manifest of what came.
     */
    public synchronized Outputs.Manifest outputs(List<String> paths, long maxBytes, Path into, long timeoutMs) throws IOException {
        try (OutputReceiver receiver = new OutputReceiver(into)) {
            channel.send(new Frame(Frame.Type.OUTPUTS, -1, new Outputs.Request(paths, maxBytes).encode()));
            byte[] answer = ((Event.Reply) awaitWithData(Event.Reply.class, timeoutMs, "answer " + Frame.Type.OUTPUTS, e -> {
                if (e instanceof Event.OutputData d) {
                    receiver.chunk(d.index(), d.bytes());
                }
            })).payload();
            Outputs.Manifest manifest;
            try {
                manifest = Outputs.Manifest.decode(answer);
            } catch (IllegalArgumentException e) {
                throw new IOException("the agent answered OUTPUTS with something that is no manifest");
            }
            return receiver.finish(manifest, "the agent");
        }
    }

    /**
     * Binds {@code port} as rank 0's store will, until {@link #unlisten}: the port bound and the
     * interface that holds {@code addr}, or why not.
     */
    public Answer listen(String addr, int port) throws IOException {
        return answer(Frame.Type.LISTEN, PortRequest.listen(addr, port).encode(), 30_000);
    }

    public void unlisten() throws IOException {
        answer(Frame.Type.UNLISTEN, new byte[0], 30_000);
    }

    /** Whether rank 0's store could bind {@code port} here ({@link #listen}), the port let go at once. */
    public Answer tryListen(String addr, int port) throws IOException {
        Answer listening = listen(addr, port);
        unlisten();
        return listening;
    }

    /** Connects to {@code addr}:{@code port}: the interface it went out of, or why not. */
    public Answer connect(String addr, int port, int timeoutMs) throws IOException {
        return answer(Frame.Type.CONNECT, PortRequest.connect(addr, port, timeoutMs).encode(), timeoutMs + 30_000L);
    }

    /**
     * A GPU lease request to the agent (see {@link org.runjob.agent.GpuLeases}): the leases it
     * takes are held as long as the agent lives.
     */
    public synchronized Lease.Answer lease(Lease.Request request) throws IOException {
        try {
            return Lease.Answer.decode(exchange(Frame.Type.LEASE, request.encode(), 30_000).payload());
        } catch (IllegalArgumentException e) {
            throw new IOException("the agent answered LEASE with no answer: " + e.getMessage());
        }
    }

    /** The node's health before an attempt ({@link org.runjob.protocol.HealthRequest}): done, or the first problem found. */
    public Answer health(HealthRequest request) throws IOException {
        return answer(Frame.Type.HEALTH, request.encode(), request.timeoutMillis() + 30_000L);
    }

    /** The node's GPUs, probed by a child JVM of its agent. */
    public synchronized GpuInventory gpus() {
        byte[] answer;
        try {
            answer = exchange(Frame.Type.PROBE_GPUS, new byte[0], 90_000).payload();
        } catch (IOException e) {
            return GpuInventory.none("cannot probe: " + e.getMessage());
        }
        try {
            return GpuInventory.decode(answer);
        } catch (IOException e) {
            return GpuInventory.none("the agent answered PROBE_GPUS with no inventory: " + e.getMessage());
        }
    }

    /**
     * Has the agent sample its GPUs ({@link GpuWatch}) and gives each sample's JSON line to
     * {@code samples} until the agent ends or this thread is interrupted; returns then.
     *
     * @throws IOException when the agent refused the watch or ended, saying why
     */
    public void watchGpus(GpuWatch request, Consumer<String> samples) throws IOException {
        Answer a = answer(Frame.Type.WATCH_GPUS, request.encode(), 30_000);
        end(a);
        while (true) {
            Event e;
            try {
                e = inbox.take();
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            }
            if (e instanceof Event.Sample g && g.gpus()) {
                samples.accept(new String(g.line(), StandardCharsets.UTF_8));
            } else if (e instanceof Event.AgentLost l) {
                throw new IOException("the agent ended (" + l.reason() + ")");
            } else if (e instanceof Event.AgentDone) {
                throw new IOException("the agent ended");
            }
        }
    }

    /** The job's files to this node's agent: what it lacks, sent here or fetched from a peer ({@link FileShipment}). */
    public FileShipment files() {
        return new FileShipment(this);
    }

    /** Hands the agent to the supervisor: its events go to {@code events} from now on, a HELLO first. */
    public AgentChannel attach(BlockingQueue<Event> events) {
        synchronized (this) {
            attached = true;
        }
        try {
            events.put(new Event.Hello(node));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        pump.redirect(events);
        return channel;
    }

    /** Ends the agent unless it was handed to the supervisor. */
    @Override
    public synchronized void close() {
        if (!attached) {
            pump.discard();
            channel.close();
        }
    }

    private Event await(Class<? extends Event> wanted, long timeoutMs, String what) throws IOException {
        return await(wanted, timeoutMs, what, line -> { });
    }

    /** Waits for the event; the agent's own output lines (rank -1: a setup's) go to {@code lines} meanwhile. */
    private Event await(Class<? extends Event> wanted, long timeoutMs, String what, Consumer<String> lines) throws IOException {
        return await(wanted, timeoutMs, what, lines, e -> { });
    }

    /** Waits for the event; an output file's chunks go to {@code data} meanwhile. */
    private Event awaitWithData(Class<? extends Event> wanted, long timeoutMs, String what, Consumer<Event> data) throws IOException {
        return await(wanted, timeoutMs, what, line -> { }, data);
    }

    private Event await(Class<? extends Event> wanted, long timeoutMs, String what, Consumer<String> lines, Consumer<Event> data)
            throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true) {
            long left = deadline - System.nanoTime();
            Event e;
            try {
                e = left > 0 ? inbox.poll(left, TimeUnit.NANOSECONDS) : null;
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted");
            }
            if (e == null) {
                throw new StillWaiting("the agent did not " + what + " within " + (timeoutMs + 999) / 1000 + " s");
            }
            if (wanted.isInstance(e)) {
                return e;
            }
            if (e instanceof Event.Output o && o.rank() < 0) {
                new String(o.bytes(), StandardCharsets.UTF_8).lines().map(Printable::line).forEach(lines);
            }
            if (e instanceof Event.OutputData) {
                data.accept(e);
            }
            if (e instanceof Event.AgentLost l) {
                throw new IOException("the agent ended (" + l.reason() + "; its stderr is in runjob.log)");
            }
            if (e instanceof Event.AgentDone) {
                throw new IOException("the agent ended");
            }
        }
    }

    /** How often a long wait looks whether it should stop (Ctrl-C). */
    static final long STOP_POLL_MS = 200;

    /** No answer yet within a wait's deadline. */
    private static final class StillWaiting extends IOException {
        StillWaiting(String message) {
            super(message);
        }
    }
}
