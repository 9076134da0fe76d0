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
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

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
 *   <li>PING is answered with PONG carrying the same payload. No frame for the heartbeat timeout
 *       of START stops every worker, as below, after a NOTICE saying so.</li>
 *   <li>STOP, or the end of its stdin (the coordinator died or the link dropped), makes it stop
 *       every worker's process tree: SIGTERM, then SIGKILL after the grace period. KILL sends
 *       SIGKILL at once.</li>
 *   <li>When every worker has ended and nothing they started is left, it sends DONE, drains the
 *       spool and exits 0.</li>
 *   <li>SIGINT is ignored: only the coordinator decides when workers stop.</li>
 * </ol>
 */
public final class Agent {

    static final long SPOOL_MEMORY = 64L * 1024 * 1024;

    private final DataInputStream in;
    private final DataOutputStream out;
    private final Map<String, String> env;
    private final Spool spool;
    private final Registry registry;
    private final AgentOptions options;
    private final GpuLeases leases;
    private FileReceiver receiver;
    private FileRelay relay;
    private Thread fetching;
    private java.net.ServerSocket listener;
    private final List<WorkerProcess> workers = new ArrayList<>();
    private final CountDownLatch started = new CountDownLatch(1);
    private volatile CountDownLatch ended;
    private volatile long graceMillis = 10_000;
    private volatile boolean stopping;
    private volatile boolean channelOpen = true;
    private volatile long lastFrame = System.nanoTime();
    private boolean finished;

    Agent(InputStream in, OutputStream out, Map<String, String> env, Path spillDir, long spoolMemory) {
        this(in, out, env, spillDir, spoolMemory, AgentOptions.NONE);
    }

    Agent(InputStream in, OutputStream out, Map<String, String> env, Path spillDir, long spoolMemory, AgentOptions options) {
        this.options = options;
        this.in = new DataInputStream(new BufferedInputStream(in, 65536));
        this.out = new DataOutputStream(new BufferedOutputStream(out, 65536));
        Map<String, String> workerEnv = new java.util.HashMap<>(env);
        workerEnv.remove(Registry.VARIABLE);
        workerEnv.remove("RUNJOB_JSA");
        workerEnv.remove("RUNJOB_JSA_DUMP");
        workerEnv.remove(Subreaper.VARIABLE);
        this.env = Map.copyOf(workerEnv);
        this.spool = new Spool(spoolMemory, spillDir);
        this.registry = new Registry(env);
        this.leases = new GpuLeases(env);
    }

    /** Runs an agent on these streams until its workers are gone; returns the exit code. */
    @SuppressWarnings("sunapi")
    public static int main(java.util.List<String> args, InputStream in, OutputStream out, Map<String, String> env) {
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
        return new Agent(interruptible(in), out, env, spillDir, SPOOL_MEMORY, options).run();
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
            return len == 0 ? 0 : channel.read(java.nio.ByteBuffer.wrap(b, off, len));
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
        awaitQuietly(started);
        awaitQuietly(ended);
        // every worker reported its exit; what they left behind (a daemonised child, say) goes too
        List<WorkerProcess> all;
        synchronized (this) {
            all = List.copyOf(workers);
        }
        if (!allGone(all)) {
            stop(all);
        }
        synchronized (this) {
            finished = true;
        }
        registry.sweep(List.of());
        // nothing of this run is left here: the workdir and the GPUs are free for the next run, even if this
        // agent stays up a while (runjob asleep: DONE waits to be read)
        WorkdirGuard.release();
        leases.releaseAll();
        put(Frame.of(Frame.Type.DONE));
        try {
            sender.join(TimeUnit.SECONDS.toMillis(30));
            in.close(); // wakes the reader (see interruptible): the JVM then exits without waiting for it
            reader.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            // closed already
        }
        return 0;
    }

    private void readLoop() {
        try {
            Frame f;
            while ((f = Frame.readFrom(in)) != null) {
                lastFrame = System.nanoTime();
                switch (f.type()) {
                    case START -> start(StartRequest.decode(f.payload()));
                    case STOP -> stopAll();
                    case KILL -> killAll();
                    case PING -> put(new Frame(Frame.Type.PONG, -1, f.payload()));
                    case FILES -> reply(receiver().manifest(f.payload()));
                    case FILE_DATA -> {
                        String answer = receiver().data(f.rank(), f.payload());
                        if (answer != null) {
                            reply(answer);
                        }
                    }
                    case SERVE -> reply(relay().serve(text(f.payload())));
                    case FETCH -> fetch(text(f.payload()).split(" "));
                    case UNSERVE -> {
                        relay().closeServer();
                        reply("ok");
                    }
                    case LISTEN -> reply(listen(f.payload()));
                    case CONNECT -> {
                        String[] a = text(f.payload()).split(" ");
                        reply(Probe.connect(a[0], Integer.parseInt(a[1]), Integer.parseInt(a[2])));
                    }
                    case UNLISTEN -> {
                        closeListener();
                        reply("ok");
                    }
                    case PROBE_GPUS -> reply(GpuProbeChild.run(env, workdir().resolve(".runjob")));
                    case LEASE -> reply(leases.handle(text(f.payload())));
                    default -> { }
                }
            }
        } catch (IOException | RuntimeException e) {
            // a broken channel is handled like a closed one
        }
        channelOpen = false;
        closeListener();
        endTransfers();
        if (started.getCount() > 0) {
            ended = new CountDownLatch(0);
            started.countDown();
        }
        stopAll();
    }

    private void reply(String text) {
        put(new Frame(Frame.Type.REPLY, -1, text.getBytes(StandardCharsets.UTF_8)));
    }

    private static String text(byte[] payload) {
        return new String(payload, StandardCharsets.UTF_8);
    }

    private Path workdir() {
        return Workdirs.resolve(options.workdir().orElse("~"), env);
    }

    private FileReceiver receiver() {
        if (receiver == null) {
            receiver = new FileReceiver(workdir());
        }
        return receiver;
    }

    private FileRelay relay() {
        if (relay == null) {
            relay = new FileRelay(receiver());
        }
        return relay;
    }

    /** FETCH "HOST PORT KEY": on its own thread, so that STOP or the end of the channel can break it off; one REPLY when done. */
    private void fetch(String[] a) {
        FileRelay r = relay();
        fetching = new Thread(() -> {
            String answer;
            try {
                answer = r.fetch(a[0], Integer.parseInt(a[1]), a[2]);
            } catch (RuntimeException e) {
                answer = "error relay failed: " + e;
            }
            reply(answer);
        }, "relay-fetch");
        fetching.setDaemon(true);
        fetching.start();
    }

    /**
     * The channel ended: breaks every relay connection, waits for a fetch under way to end, and
     * removes the partial file of a transfer under way, whether runjob or a peer was sending it.
     */
    private void endTransfers() {
        if (relay != null) {
            relay.close();
        }
        if (fetching != null) {
            try {
                fetching.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (receiver != null) {
            receiver.abort("the channel ended");
        }
    }

    /** LISTEN "ADDR PORT": binds as rank 0's store will and accepts until UNLISTEN; "listening PORT IFACE" or "failed ...". */
    private String listen(byte[] payload) {
        String[] a = text(payload).split(" ");
        closeListener();
        try {
            listener = Probe.listen(Integer.parseInt(a[1]));
            return "listening " + listener.getLocalPort() + " " + Probe.interfaceHolding(a[0]);
        } catch (IOException e) {
            return "failed port " + a[1] + " cannot be bound: " + e.getMessage();
        }
    }

    private void closeListener() {
        if (listener != null) {
            try {
                listener.close();
            } catch (IOException e) {
                // closed
            }
            listener = null;
        }
    }

    private synchronized void start(StartRequest request) {
        if (started.getCount() == 0) {
            return;
        }
        if (relay != null) {
            relay.closeServer();
        }
        graceMillis = request.graceMillis();
        if (request.heartbeatTimeoutMillis() > 0) {
            watchHeartbeats(request.heartbeatTimeoutMillis());
        }
        ended = new CountDownLatch(request.workers().size());
        for (WorkerSpec spec : request.workers()) {
            workers.add(new WorkerProcess(spec, spool));
        }
        registry.grace(graceMillis);
        started.countDown();
        for (WorkerProcess w : workers) {
            w.start(env, ended::countDown);
        }
        registry.sweep(workerPids());
        Thread keeper = new Thread(this::keepRegistry, "agent-registry");
        keeper.setDaemon(true);
        keeper.start();
    }

    /** Keeps the watchdog's list of this node's job processes current until the agent is done. */
    private void keepRegistry() {
        while (true) {
            try {
                Thread.sleep(Registry.EVERY_MS);
            } catch (InterruptedException e) {
                return;
            }
            synchronized (this) {
                if (finished) {
                    return;
                }
            }
            registry.sweep(workerPids());
        }
    }

    private synchronized List<Long> workerPids() {
        return workers.stream().map(WorkerProcess::pid).filter(p -> p > 0).toList();
    }

    /**
     * True when every worker is gone and nothing else descends from the agent (an adopted daemon,
     * say). As a subreaper the agent's own tree holds all of them; otherwise the machine's process
     * table is read for groups and tokens too.
     */
    private boolean allGone(List<WorkerProcess> snapshot) {
        if (Subreaper.active()) {
            // everything the workers started is among the agent's descendants: one walk of its own
            // tree answers, without reading every process of the machine (/proc/*/environ)
            return registry.sweep(workerPids()).isEmpty();
        }
        return WorkerProcess.allGone(snapshot) && registry.sweep(workerPids()).isEmpty();
    }

    /** TERM to every worker tree and adopted process, KILL to what is left after the grace period. */
    private void stop(List<WorkerProcess> snapshot) {
        java.util.Set<Long> signalled = new java.util.HashSet<>();
        snapshot.forEach(w -> signalled.addAll(w.terminate()));
        signalStrays(false, signalled);
        if (!WorkerProcess.waitUntil(() -> allGone(snapshot), graceMillis)) {
            snapshot.forEach(WorkerProcess::kill);
            signalStrays(true, java.util.Set.of());
        }
    }

    /** Signals every living descendant of the agent but those in {@code signalled} (one TERM per process: a second can cut a handler short). */
    private void signalStrays(boolean kill, java.util.Set<Long> signalled) {
        for (long pid : registry.sweep(workerPids())) {
            if (signalled.contains(pid)) {
                continue;
            }
            ProcessHandle.of(pid).ifPresent(h -> {
                if (kill) {
                    h.destroyForcibly();
                } else {
                    h.destroy();
                }
            });
        }
    }

    /**
     * A coordinator silent for longer than {@code timeoutMs} is gone (a dead link may never close our
     * stdin): the workers are stopped, with a NOTICE saying why, and their output keeps flowing.
     */
    private void watchHeartbeats(long timeoutMs) {
        Thread t = new Thread(() -> {
            while (!stopping) {
                if (System.nanoTime() - lastFrame > timeoutMs * 1_000_000) {
                    // the channel may well be open (runjob paused, a laptop asleep): what the workers
                    // still print, and why they stop, is sent if runjob reads again
                    put(new Frame(Frame.Type.NOTICE, -1, ("no heartbeat from runjob for " + timeoutMs / 1000 + " s: stopping every worker")
                            .getBytes(StandardCharsets.UTF_8)));
                    stopAll();
                    return;
                }
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "agent-heartbeat");
        t.setDaemon(true);
        t.start();
    }

    /** TERM every worker tree, then KILL what is left after the grace period; once only. */
    private void stopAll() {
        List<WorkerProcess> snapshot;
        synchronized (this) {
            if (stopping) {
                return;
            }
            stopping = true;
            snapshot = List.copyOf(workers);
        }
        Thread t = new Thread(() -> stop(snapshot), "agent-stop");
        t.setDaemon(true);
        t.start();
    }

    private void killAll() {
        List<WorkerProcess> snapshot;
        synchronized (this) {
            stopping = true;
            snapshot = List.copyOf(workers);
        }
        snapshot.forEach(WorkerProcess::kill);
        signalStrays(true, java.util.Set.of());
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
            stopAll();
        } finally {
            try {
                spool.close();
            } catch (IOException e) {
                // best effort
            }
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        while (latch != null) {
            try {
                latch.await();
                return;
            } catch (InterruptedException e) {
                // keep waiting
            }
        }
    }
}
