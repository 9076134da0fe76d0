package org.runjob.agent;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.function.Consumer;

import org.runjob.observe.Sources;
import org.runjob.protocol.AgentOptions;
import org.runjob.protocol.Answer;
import org.runjob.protocol.EnvironmentReply;
import org.runjob.protocol.EnvironmentRequest;
import org.runjob.protocol.Frame;
import org.runjob.protocol.GpuInventory;
import org.runjob.protocol.GpuWatch;
import org.runjob.protocol.HealthRequest;
import org.runjob.protocol.Lease;
import org.runjob.protocol.OutputSender;
import org.runjob.protocol.Outputs;
import org.runjob.protocol.PortRequest;
import org.runjob.protocol.ProtocolException;
import org.runjob.protocol.Sample;

/**
 * The requests an agent answers before START, one at a time, each with one REPLY: FILES and
 * FILE_DATA ({@link FileReceiver}); SERVE, FETCH and UNSERVE (relay between agents,
 * {@link FileRelay}; a FETCH runs on its own thread, so STOP or the channel's end can break it
 * off); LISTEN, CONNECT and UNLISTEN (the rendezvous checks, {@link Probe}); PROBE_GPUS (a child
 * JVM runs the probe; the agent adds each GPU's compute processes); WATCH_GPUS ({@link GpuSampler}
 * until the channel ends, each GPU's lease holder named); LEASE ({@link GpuLeases}); HEALTH ({@link HealthCheck}); ENVIRONMENT ({@link NodeEnvironment}); OUTPUTS
 * ({@link OutputSender}). A payload that is not what its type says is a
 * {@link ProtocolException}.
 */
final class AgentRequests {

    private final Map<String, String> env;
    private final AgentOptions options;
    private final GpuLeases leases;
    private final Consumer<byte[]> reply;
    private final Consumer<String> setupOutput;
    private final Consumer<Frame> frames;
    private FileReceiver receiver;
    private Thread environment;
    private FileRelay relay;
    private Thread fetching;
    private ServerSocket listener;

    /**
     * @param reply       sends one REPLY
     * @param setupOutput sends one line that a setup command printed
     * @param frames      sends one frame (an output file's data)
     */
    AgentRequests(Map<String, String> env, AgentOptions options, GpuLeases leases, Consumer<byte[]> reply, Consumer<String> setupOutput,
                  Consumer<Frame> frames) {
        this.env = env;
        this.options = options;
        this.leases = leases;
        this.reply = reply;
        this.setupOutput = setupOutput;
        this.frames = frames;
    }

    /** Answers {@code f} when it is a request; false when it is not one. */
    boolean handle(Frame f) throws ProtocolException {
        switch (f.type()) {
            case FILES -> reply.accept(receiver().manifest(f.payload()).encode());
            case FILE_DATA -> {
                Answer answer = receiver().data(f.rank(), f.payload());
                if (answer != null) {
                    reply.accept(answer.encode());
                }
            }
            case SERVE -> reply.accept(relay().serve(request(f).key()).encode());
            case FETCH -> {
                PortRequest r = request(f);
                fetch(r.addr(), r.port(), r.key());
            }
            case UNSERVE -> {
                relay().closeServer();
                reply.accept(Answer.done().encode());
            }
            case LISTEN -> {
                PortRequest r = request(f);
                reply.accept(listen(r.addr(), r.port()).encode());
            }
            case CONNECT -> {
                PortRequest r = request(f);
                reply.accept(Probe.connect(r.addr(), r.port(), r.timeoutMs()).encode());
            }
            case UNLISTEN -> {
                closeListener();
                reply.accept(Answer.done().encode());
            }
            case PROBE_GPUS -> {
                GpuInventory found = GpuInventory.fromProbe(GpuProbeChild.run(env, base().resolve(".runjob")));
                reply.accept((found.gpus().isEmpty() ? found : found.withProcesses(GpuSampler.processes())).encode());
            }
            case WATCH_GPUS -> watch(GpuWatch.decode(f.payload()));
            case LEASE -> reply.accept(leases.handle(leaseRequest(f)).encode());
            case ENVIRONMENT -> environment(EnvironmentRequest.decode(f.payload()));
            case HEALTH -> health(healthRequest(f));
            case OUTPUTS -> {
                Outputs.Request request = Outputs.Request.decode(f.payload());
                reply.accept(OutputSender.send(request.paths(), request.maxBytes(), workdir(), frames).encode());
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    /** True once a WATCH_GPUS request started sampling: one watch per agent. */
    private boolean watching;

    private void watch(GpuWatch request) {
        if (!watching) {
            watching = true;
            Lease.Request query = Lease.Request.query(request.gpus());
            GpuSampler.start(request.intervalMillis(), List.of(), () -> request.gpus().isEmpty() ? Map.of() : leases.handle(query).held(),
                    line -> frames.accept(new Frame(Frame.Type.SAMPLE, -1, Sample.encode(Sources.GPUS, line))));
        }
        reply.accept(Answer.done().encode());
    }

    /** START came: this node no longer serves its files to peers. */
    void stopServing() {
        if (relay != null) {
            relay.closeServer();
        }
    }

    /**
     * The channel ended: the rendezvous listener closes, every relay connection breaks, a fetch
     * under way ends, and the partial file of a transfer under way goes, whoever was sending it.
     */
    void channelEnded() {
        closeListener();
        if (environment != null) {
            environment.interrupt(); // a setup command under way is killed
            try {
                environment.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
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

    private static HealthRequest healthRequest(Frame f) throws ProtocolException {
        try {
            return HealthRequest.decode(f.payload());
        } catch (IllegalArgumentException e) {
            throw new ProtocolException("a HEALTH payload that is no request: " + e.getMessage());
        }
    }

    private static Lease.Request leaseRequest(Frame f) throws ProtocolException {
        try {
            return Lease.Request.decode(f.payload());
        } catch (IllegalArgumentException e) {
            throw new ProtocolException("a LEASE payload that is no request: " + e.getMessage());
        }
    }

    private static PortRequest request(Frame f) throws ProtocolException {
        try {
            return PortRequest.decode(f.payload());
        } catch (IllegalArgumentException e) {
            throw new ProtocolException("a " + f.type() + " payload that is no request: " + e.getMessage());
        }
    }

    /** The workdir, as the job file names it. */
    private Path base() {
        return Workdirs.resolve(options.workdir().orElse("~"), env);
    }

    /** Where the run works: its own directory, else the workdir. */
    private Path workdir() {
        return Workdirs.resolve(options.runDir().or(options::workdir).orElse("~"), env);
    }

    private FileReceiver receiver() {
        if (receiver == null) {
            // a run in a directory of its own links what earlier runs received, kept in the workdir's .runjob/files
            Optional<FileStore> store = options.runDir().isPresent() ? FileStore.open(base().resolve(".runjob").resolve("files")) : Optional.empty();
            receiver = new FileReceiver(workdir(), store);
        }
        return receiver;
    }

    private FileRelay relay() {
        if (relay == null) {
            relay = new FileRelay(receiver());
        }
        return relay;
    }

    /**
     * ENVIRONMENT: on its own thread (setup may take minutes, and the channel's end must still be
     * seen); one REPLY, the {@link EnvironmentReply}, when done.
     */
    private void environment(EnvironmentRequest request) {
        Path meta = base().resolve(".runjob");
        Path scratch = Registry.dir(env).orElse(meta).resolve("env");
        environment = new Thread(() -> {
            byte[] answer;
            try {
                answer = NodeEnvironment.answer(request, env, workdir(), meta, scratch, setupOutput).encode();
            } catch (RuntimeException | LinkageError | ServiceConfigurationError e) {
                // a class this agent's jar lacks fails the check with a reason; the coordinator never waits for a reply that will not come
                Map<String, String> facts = Map.of(EnvironmentReply.ACTIVATION_ERROR, "the environment check failed: " + e);
                answer = new EnvironmentReply(facts, Map.of(), List.of()).encode();
            }
            reply.accept(answer);
        }, "environment");
        environment.setDaemon(true);
        environment.start();
    }

    /** HEALTH: on its own thread (a check may take a while); one REPLY, an {@link Answer}, when done. */
    private void health(HealthRequest request) {
        Path dir = Files.isDirectory(workdir()) ? workdir() : base();
        Thread t = new Thread(() -> {
            Answer answer;
            try {
                answer = HealthCheck.answer(request, env, dir);
            } catch (RuntimeException | LinkageError e) {
                answer = Answer.failed("the health check failed: " + e);
            }
            reply.accept(answer.encode());
        }, "health");
        t.setDaemon(true);
        t.start();
    }

    /** FETCH: on its own thread; one REPLY when done. */
    private void fetch(String host, int port, String key) {
        FileRelay r = relay();
        fetching = new Thread(() -> {
            Answer answer;
            try {
                answer = r.fetch(host, port, key);
            } catch (RuntimeException | LinkageError e) {
                answer = Answer.failed("relay failed: " + e);
            }
            reply.accept(answer.encode());
        }, "relay-fetch");
        fetching.setDaemon(true);
        fetching.start();
    }

    /** LISTEN: binds as rank 0's store will and accepts until UNLISTEN; the port and the interface holding {@code addr}. */
    private Answer listen(String addr, int port) {
        closeListener();
        try {
            listener = Probe.listen(port);
            return Answer.done(listener.getLocalPort(), Probe.interfaceHolding(addr));
        } catch (IOException e) {
            return Answer.failed("port " + port + " cannot be bound: " + e.getMessage());
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
}
