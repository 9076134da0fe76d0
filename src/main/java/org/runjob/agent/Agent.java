package org.runjob.agent;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.runjob.observe.Source;
import org.runjob.observe.Sources;
import org.runjob.protocol.AgentOptions;
import org.runjob.protocol.Exit;
import org.runjob.protocol.Frame;
import org.runjob.protocol.NodeFacts;
import org.runjob.protocol.ProtocolException;
import org.runjob.protocol.Sample;
import org.runjob.protocol.Stacks;
import org.runjob.protocol.StartRequest;

/**
 * The node agent ({@code runjob agent}): runs on a node, started by the coordinator as a child
 * process or over SSH, and speaks {@link Frame}s on its stdin and stdout.
 *
 * <p>Contract:
 * <ol>
 *   <li>On start it checks its node ({@link WorkdirGuard}: workdir, trust, run lock, disk,
 *       program) and sends HELLO carrying the {@link NodeFacts}.</li>
 *   <li>Before START it answers preflight requests, one at a time, each with one REPLY: FILES and
 *       FILE_DATA ({@link FileReceiver}), SERVE / FETCH / UNSERVE (relay distribution between
 *       agents, {@link FileRelay}; a FETCH runs beside the read loop, and START or the end of the
 *       channel stops serving), LISTEN / CONNECT / UNLISTEN (the rendezvous checks,
 *       {@link Probe}), PROBE_GPUS (a child JVM runs the GPU probe), LEASE (GPU leases held for
 *       the agent's life, {@link GpuLeases}).</li>
 *   <li>It then waits for one START naming this node's workers.</li>
 *   <li>It starts every worker ({@link WorkerProcess}), sends STARTED with each pid, streams
 *       output as STDOUT/STDERR frames through a {@link Spool} (memory, then a spill file: a slow
 *       coordinator never blocks a worker), and EXITED with each worker's {@link Exit}.</li>
 *   <li>STACKS is answered with one STACK per running worker: every thread's stack of its Python
 *       processes ({@link StackHook}), the run undisturbed.</li>
 *   <li>PING is answered with PONG carrying the same payload. No frame for the heartbeat timeout
 *       of START stops every worker, as below, after a NOTICE saying so.</li>
 *   <li>STOP, or the end of its stdin (the coordinator died or the link dropped), makes it stop
 *       every worker's process tree: SIGTERM, then SIGKILL after the grace period. KILL sends
 *       SIGKILL at once.</li>
 *   <li>When every worker has ended and nothing they started is left, it sends DONE, drains the
 *       spool and exits 0.</li>
 *   <li>A frame that is no frame (an unknown type, a bad length, one meant for the coordinator)
 *       or a request it cannot handle ends the channel as its end would, after a NOTICE and a
 *       line on stderr saying why; the agent then exits {@value #EXIT_FAULT}.</li>
 *   <li>SIGINT is ignored: only the coordinator decides when workers stop.</li>
 * </ol>
 */
public final class Agent {

    static final long SPOOL_MEMORY = 64L * 1024 * 1024;
    /** The agent's exit code when it ended on a bad frame or an unexpected error (its stderr says which). */
    static final int EXIT_FAULT = 3;

    private final DataInputStream in;
    private final DataOutputStream out;
    private final Map<String, String> env;
    private final Spool spool;
    private final AgentOptions options;
    private final GpuLeases leases;
    private final WorkerGroup workers;
    private final AgentRequests requests;
    private volatile boolean channelOpen = true;
    private volatile long lastFrame = System.nanoTime();
    /** Why the read loop ended on a fault, not on a closed channel; null while none. */
    private volatile String failure;

    /** An agent inside another program (a test's JVM): the program's other children are not its own ({@link Registry}). */
    Agent(InputStream in, OutputStream out, Map<String, String> env, Path spillDir, long spoolMemory) {
        this(in, out, env, spillDir, spoolMemory, AgentOptions.NONE, false);
    }

    private Agent(InputStream in, OutputStream out, Map<String, String> env, Path spillDir, long spoolMemory, AgentOptions options,
                  boolean ownsProcess) {
        this.options = options;
        this.in = new DataInputStream(new BufferedInputStream(in, 65536));
        this.out = new DataOutputStream(new BufferedOutputStream(out, 65536));
        Map<String, String> workerEnv = new HashMap<>(env);
        workerEnv.remove(Registry.VARIABLE);
        workerEnv.remove("RUNJOB_JSA");
        workerEnv.remove("RUNJOB_JSA_DUMP");
        workerEnv.remove(Subreaper.VARIABLE);
        this.env = Map.copyOf(workerEnv);
        this.spool = new Spool(spoolMemory, spillDir);
        this.leases = new GpuLeases(env);
        this.workers = new WorkerGroup(spool, new Registry(env, ownsProcess), this.env, Registry.dir(env));
        this.requests = new AgentRequests(this.env, options, leases, this::reply,
                line -> put(new Frame(Frame.Type.STDOUT, -1, (line + "\n").getBytes(StandardCharsets.UTF_8))), this::put);
    }

    /** Runs an agent on these streams until its workers are gone; returns the exit code. */
    @SuppressWarnings("sunapi")
    public static int main(List<String> args, InputStream in, OutputStream out, Map<String, String> env) {
        AgentOptions options;
        try {
            options = AgentOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("runjob agent: " + e.getMessage());
            return 2;
        }
        try {
            sun.misc.Signal.handle(new sun.misc.Signal("INT"), s -> { });
        } catch (IllegalArgumentException e) {
            // SIGINT already ignored or reserved: fine either way
        }
        Optional<String> subreaper = Subreaper.become(env);
        subreaper.ifPresent(why -> System.err.println("runjob agent: not a subreaper (" + why
                + "); processes that leave a worker's tree are found by its token only"));
        Path spillDir = Path.of(System.getProperty("java.io.tmpdir"));
        return new Agent(interruptible(in), out, env, spillDir, SPOOL_MEMORY, options, true).run();
    }

    /**
     * The real stdin as a channel that {@link #run} can close under its blocked reader. A thread
     * left blocked in a plain {@code read(0)} holds the JVM's exit for 300 ms (HotSpot waits that
     * long for threads in native code), on every node of every run; closing a {@link FileChannel}
     * wakes its reader at once.
     */
    private static InputStream interruptible(InputStream in) {
        return in == System.in ? new ChannelStream(new FileInputStream(FileDescriptor.in).getChannel()) : in;
    }

    /**
     * A pipe's {@link FileChannel} as a stream. Not {@code Channels.newInputStream}: its
     * {@code available()} asks a FileChannel for size and position, which a pipe does not have
     * ("Illegal seek"), so every frame larger than one buffer (a START for many workers) broke
     * the channel.
     */
    private static final class ChannelStream extends InputStream {
        private final FileChannel channel;

        ChannelStream(FileChannel channel) {
            this.channel = channel;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return len == 0 ? 0 : channel.read(ByteBuffer.wrap(b, off, len));
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }

    int run() {
        Thread sender = new Thread(this::sendLoop, "agent-send");
        sender.start();
        Thread reader = new Thread(this::readLoop, "agent-read");
        reader.setDaemon(true);
        reader.start();
        put(new Frame(Frame.Type.HELLO, -1, WorkdirGuard.check(options, env).encode()));
        workers.awaitEnd();
        // every worker reported its exit; what they left behind (a daemonised child, say) goes too
        workers.finish();
        // nothing of this run is left here: the workdir and the GPUs are free for the next run, even if this
        // agent stays up a while (runjob asleep: DONE waits to be read)
        WorkdirGuard.release();
        leases.releaseAll();
        put(Frame.of(Frame.Type.DONE));
        try {
            awaitSent(sender);
            in.close(); // wakes the reader (see interruptible): the JVM then exits without waiting for it
            reader.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            // closed already
        }
        return failure == null ? 0 : EXIT_FAULT;
    }

    /**
     * Waits until the sender wrote DONE, for as long as the coordinator is heard: a coordinator
     * that reads slowly (its console stopped) but still sends PINGs gets every spooled frame, and
     * the stream never ends inside a frame. Once nothing came from it for {@link #END_WAIT_MS}
     * (or the heartbeat timeout, if longer) the agent stops waiting and exits.
     */
    private void awaitSent(Thread sender) throws InterruptedException {
        long quietMs = Math.max(END_WAIT_MS, heartbeatMs);
        while (sender.isAlive()) {
            sender.join(200);
            if (System.nanoTime() - lastFrame > TimeUnit.MILLISECONDS.toNanos(quietMs)) {
                sender.join(200);
                return;
            }
        }
    }

    /** How long a finished agent waits for a coordinator it no longer hears to read what is left. */
    static final long END_WAIT_MS = 30_000;
    /** The heartbeat timeout of START; 0 before it. */
    private volatile long heartbeatMs;

    /** Reads frames until the channel ends or a fault: supervision here, requests in {@link AgentRequests}. */
    private void readLoop() {
        try {
            Frame f;
            while ((f = Frame.readFrom(in)) != null) {
                lastFrame = System.nanoTime();
                switch (f.type()) {
                    case START -> start(StartRequest.decode(f.payload()));
                    case STOP -> workers.stopAll();
                    case KILL -> workers.killAll();
                    case PING -> put(new Frame(Frame.Type.PONG, -1, f.payload()));
                    case STACKS -> workers.stacks(Stacks.Request.decode(f.payload()));
                    default -> {
                        if (!requests.handle(f)) {
                            throw new ProtocolException("a " + f.type() + " frame goes to the coordinator, not to an agent");
                        }
                    }
                }
            }
        } catch (ProtocolException | IllegalArgumentException e) {
            // IllegalArgumentException: a payload codec's refusal (a START of another format, say)
            fail("bad frame from runjob: " + e.getMessage() + " (a runjob of another version?)", null);
        } catch (RuntimeException e) {
            fail("unexpected error: " + e, e);
        } catch (IOException e) {
            // a broken channel is handled like a closed one
        }
        if (failure == null) {
            channelOpen = false; // after a fault the coordinator still reads: the NOTICE, the exits and DONE go to it
        }
        requests.channelEnded();
        workers.noStart();
        workers.stopAll();
    }

    /** True once the node's sources are being sampled: one sampling per agent. */
    private boolean sampling;

    private void start(StartRequest request) {
        requests.stopServing();
        if (request.sampleMillis() > 0 && !sampling) {
            sampling = true;
            sample(request);
        }
        heartbeatMs = request.heartbeatTimeoutMillis();
        if (workers.start(request) && request.heartbeatTimeoutMillis() > 0) {
            long timeoutMs = request.heartbeatTimeoutMillis();
            // the channel may well be open (runjob paused, a laptop asleep): what the workers still print,
            // and why they stop, is sent if runjob reads again
            Heartbeat.watch(timeoutMs, () -> lastFrame, workers::stopping, () -> {
                notice("no heartbeat from runjob for " + timeoutMs / 1000 + " s: stopping every worker");
                workers.stopAll();
            });
        }
    }

    /**
     * Ends the channel's reading on a fault, not a closed channel: says why on stderr (the
     * coordinator logs it) and in a NOTICE, and makes the agent exit {@value #EXIT_FAULT} once its
     * workers are stopped.
     */
    private void fail(String why, Throwable trace) {
        failure = why;
        System.err.println("runjob agent: " + why);
        if (trace != null) {
            trace.printStackTrace();
        }
        notice("agent: " + why + ": stopping every worker");
    }

    /**
     * Starts the GPUs' source and each one the request names, every {@code sampleMillis}, each
     * sample a SAMPLE frame; a name this agent's runjob does not have is said in a NOTICE.
     */
    private void sample(StartRequest request) {
        List<Source.Worker> workers = request.workers().stream().map(w -> new Source.Worker(w.rank(), w.env())).toList();
        List<Source> sources = new ArrayList<>(List.of(new GpuSource()));
        for (String name : request.sources()) {
            Optional<Source> s = Sources.find(name);
            if (s.isEmpty()) {
                notice("observation source " + name + " is not in this node's runjob: no samples from it");
            }
            s.ifPresent(sources::add);
        }
        for (Source s : sources) {
            try {
                s.start(request.sampleMillis(), workers, line -> put(new Frame(Frame.Type.SAMPLE, -1, Sample.encode(s.name(), line))));
            } catch (RuntimeException | LinkageError e) {
                notice("observation source " + s.name() + " did not start: " + e);
            }
        }
    }

    /** Tells the coordinator, for the user, why the agent acts on its own. */
    private void notice(String text) {
        put(new Frame(Frame.Type.NOTICE, -1, text.getBytes(StandardCharsets.UTF_8)));
    }

    private void reply(byte[] payload) {
        put(new Frame(Frame.Type.REPLY, -1, payload));
    }

    private void put(Frame f) {
        try {
            spool.put(f);
        } catch (IOException e) {
            // cannot queue: the channel is going away
        }
    }

    private void sendLoop() {
        try {
            while (true) {
                Frame f = spool.take(1000);
                if (f == null) {
                    if (spool.isEmpty()) {
                        out.flush();
                    }
                    continue;
                }
                if (f.type() == Frame.Type.DONE) {
                    f.writeTo(out);
                    out.flush();
                    return;
                }
                if (channelOpen) {
                    f.writeTo(out);
                    if (spool.isEmpty()) {
                        out.flush();
                    }
                }
            }
        } catch (IOException | InterruptedException e) {
            channelOpen = false;
            workers.stopAll();
        } finally {
            try {
                spool.close();
            } catch (IOException e) {
                // best effort
            }
        }
    }

}
