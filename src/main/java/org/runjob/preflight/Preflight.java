package org.runjob.preflight;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.runjob.distribute.FileList;
import org.runjob.distribute.Shipped;
import org.runjob.node.Backend;
import org.runjob.node.FanOut;
import org.runjob.node.NodeException;
import org.runjob.protocol.Answer;
import org.runjob.protocol.EnvironmentReply;
import org.runjob.protocol.EnvironmentRequest;
import org.runjob.protocol.GpuInventory;
import org.runjob.protocol.NodeFacts;
import org.runjob.protocol.NodeJvm;
import org.runjob.session.NodeSession;
import org.runjob.session.NodeStarter;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeAddress;
import org.runjob.spec.NodeSpec;

/**
 * Checks every node before anything starts, each over its agent's one channel ({@link NodeSession}):
 * one remote command and one JVM per node. Stages return values; each node goes through its own
 * stages as fast as it can ({@link FanOut}), without waiting for the others:
 *
 * <ol>
 *   <li>{@link #start}: reach the node (SSH login; the Slurm allocation); the agent starts (java
 *       &gt;= 17 on the node, its jar cached by content) and reports its facts: the workdir exists,
 *       is trusted and is not in use by another run; free disk.</li>
 *   <li>{@link Shipping}: the job's files, written by the agent; nodes that share a workdir (same
 *       token) take turns, so the first sends and the others find the files there.</li>
 *   <li>{@link EnvironmentCheck}: the node's environment activated, its setup run when due, the
 *       entrypoint's program found there as the workers will run it; once all are in, torch, CUDA
 *       and NCCL versions are compared between nodes.</li>
 *   <li>{@link GpuSurvey}: the GPUs of nodes that use them (probed by the agent, local nodes once
 *       per machine; on Slurm, those its step was given); a {@code gpus: {count: N}} node picks and
 *       leases free ones, listed GPUs are leased; judged by {@link GpuCheck} once all are in:
 *       indices exist, a driver is there, busy or leased GPUs and mixed models are warned of.</li>
 * </ol>
 * Then, when every node passed, the rendezvous: the master's agent binds MASTER_PORT (0 for
 * {@code port: auto}) as rank 0 will; every node's agent, the master's too, connects to
 * MASTER_ADDR:MASTER_PORT and reports the interface its route leaves by (for GLOO_SOCKET_IFNAME /
 * NCCL_SOCKET_IFNAME). The agents stay up for the launch ({@link Outcome#sessions}); whoever does
 * not launch closes them.
 */
public final class Preflight {

    static final long MIN_FREE_BYTES = 64L << 20;
    static final long WARN_FREE_BYTES = 1L << 30;

    /** The report, the agents preflight started (by node), and what was shipped to each node. */
    public record Outcome(PreflightReport report, Map<String, NodeSession> sessions, Map<String, Shipped> shipped)
            implements AutoCloseable {
        /** Ends the agents that were not handed on. */
        @Override
        public void close() {
            sessions.values().forEach(NodeSession::close);
        }
    }

    private final JobSpec spec;
    private final String backend;
    private final NodeStarter starter;
    private final GpuSurvey gpuSurvey;
    private final Optional<String> runId;
    private final EnvironmentRequest.Setup setup;
    private final EnvironmentCheck.SetupOutput setupOutput;
    private final BooleanSupplier stop;

    /**
     * For a run, or (runId empty) for {@code check} and {@code gpus}, which lease nothing.
     *
     * @param runId       the run's id: its agents lease the GPUs it uses; empty for commands that start nothing
     * @param waitForGpus how long a node may wait for its {@code gpus: {count: N}} to be free (re-probing); empty: not at all
     */
    public Preflight(JobSpec spec, Backend backend, NodeStarter starter, Optional<String> runId,
                     Optional<Duration> waitForGpus) {
        this(spec, backend, starter, runId, waitForGpus, runId.isPresent() ? EnvironmentRequest.Setup.WHEN_DUE : EnvironmentRequest.Setup.CHECK,
                EnvironmentCheck.SetupOutput.NONE, () -> false);
    }

    /**
     * @param setup       whether each node's setup runs when due, always, or not at all ({@code check})
     * @param setupOutput where the lines a node's setup prints go
     * @param stop        true once a wait for a node's setup should end (Ctrl-C)
     */
    public Preflight(JobSpec spec, Backend backend, NodeStarter starter, Optional<String> runId, Optional<Duration> waitForGpus,
                     EnvironmentRequest.Setup setup, EnvironmentCheck.SetupOutput setupOutput, BooleanSupplier stop) {
        this.spec = spec;
        this.backend = backend.name();
        this.starter = starter;
        this.gpuSurvey = new GpuSurvey(spec, backend.schedulerGpus(), runId, waitForGpus);
        this.runId = runId;
        this.setup = setup;
        this.setupOutput = setupOutput;
        this.stop = stop;
    }

    /** @param files what to ship (none for {@code check}); {@code progress} gets a line now and then for large files */
    public Outcome run(List<JobSpec.ShippedFile> files, Consumer<String> progress) {
        return run(files, files, progress);
    }

    /**
     * As {@link #run(List, Consumer)}, with the setup key computed over {@code keyed}: the job's
     * files even where none are shipped ({@code check}), so check and run agree on whether setup is due.
     */
    public Outcome run(List<JobSpec.ShippedFile> files, List<JobSpec.ShippedFile> keyed, Consumer<String> progress) {
        Map<String, NodeSession> sessions = new ConcurrentHashMap<>();
        Map<String, Map<Check, Cell>> cells = new LinkedHashMap<>();
        for (NodeSpec node : spec.nodes()) {
            cells.put(node.name(), Collections.synchronizedMap(new EnumMap<>(Check.class)));
        }
        List<FileList.Entry> entries;
        long bytes = 0;
        try {
            entries = FileList.of(files);
            for (FileList.Entry e : entries) {
                bytes += Files.size(e.source());
            }
        } catch (IOException e) {
            spec.nodes().forEach(n -> cells.get(n.name()).put(Check.WORKDIR, Cell.fail("cannot read the files to ship: " + e.getMessage())));
            return new Outcome(report(cells, OptionalInt.empty(), Map.of(), Map.of(), Map.of()), sessions, Map.of());
        }
        int remote = (int) spec.nodes().stream().filter(n -> !(n.address() instanceof NodeAddress.Local)).count();
        // agents that will receive much run C2 too: only it hashes with the CPU's SHA-256 instructions
        NodeJvm.Jit jit = NodeJvm.Jit.forShipping(bytes);
        Shipping shipping = new Shipping(entries, bytes, progress, spec.relay(), remote,
                n -> n.address() instanceof NodeAddress.Local ? Optional.empty() : starter.address(n).or(() -> n.address().reachableAs()));
        List<FileList.Entry> keyEntries = entries;
        if (keyed != files) {
            try {
                keyEntries = FileList.of(keyed);
            } catch (IOException e) {
                keyEntries = entries; // a file that cannot be read here: the run says so when it ships
            }
        }
        EnvironmentCheck environments = new EnvironmentCheck(spec, keyEntries, setup, !files.isEmpty() || runId.isPresent(), runId, setupOutput,
                stop);
        try (FanOut fanOut = new FanOut(spec.nodes().size())) {
            // each node on its own: start, ship, environment, GPU survey; a fast node does not wait for a slow one
            Map<NodeSpec, NodeResult> results = fanOut.onEach(spec.nodes(), node -> {
                Map<Check, Cell> row = cells.get(node.name());
                Optional<NodeFacts> facts = start(node, jit, row, sessions);
                if (facts.isEmpty()) {
                    return NodeResult.FAILED;
                }
                Optional<Shipped> shipped = shipping.ship(node, sessions.get(node.name()), facts.get(), row);
                Optional<EnvironmentReply> environment = failed(row) ? Optional.empty()
                        : environments.check(node, sessions.get(node.name()), row);
                Optional<GpuInventory> gpus = failed(row) ? Optional.empty()
                        : gpuSurvey.survey(node, sessions.get(node.name()), facts.get(), row, progress);
                return new NodeResult(facts, shipped, environment, gpus);
            });
            Map<String, GpuInventory> inventories = new LinkedHashMap<>();
            Map<String, Shipped> shipped = new LinkedHashMap<>();
            Map<String, EnvironmentReply> replies = new LinkedHashMap<>();
            results.forEach((node, r) -> {
                r.gpus().ifPresent(g -> inventories.put(node.name(), g));
                r.shipped().ifPresent(x -> shipped.put(node.name(), x));
                r.environment().ifPresent(x -> replies.put(node.name(), x));
            });
            shipping.stopServing();
            shipping.noteShared(cells);
            environments.judge(cells, replies);
            gpuSurvey.judge(cells, inventories);
            Map<String, String> ifaces = new ConcurrentHashMap<>();
            OptionalInt port = allPassed(cells) ? rendezvous(fanOut, cells, sessions, ifaces) : OptionalInt.empty();
            return new Outcome(report(cells, port, inventories, ifaces, replies), sessions, shipped);
        }
    }

    /** What one node's checks gave: its facts, what was shipped to it, its GPUs (each empty when not reached). */
    private record NodeResult(Optional<NodeFacts> facts, Optional<Shipped> shipped, Optional<EnvironmentReply> environment,
                              Optional<GpuInventory> gpus) {
        static final NodeResult FAILED = new NodeResult(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());
    }

    private PreflightReport report(Map<String, Map<Check, Cell>> cells, OptionalInt port, Map<String, GpuInventory> inventories,
                                   Map<String, String> ifaces, Map<String, EnvironmentReply> environments) {
        List<NodeReport> reports = new ArrayList<>();
        for (NodeSpec node : spec.nodes()) {
            reports.add(new NodeReport(node.name(), cells.get(node.name()), Optional.ofNullable(ifaces.get(node.name()))));
        }
        return new PreflightReport(reports, port, inventories, masterAddr(), backend, environments);
    }

    private static boolean failed(Map<Check, Cell> row) {
        return row.values().stream().anyMatch(c -> c.status() == Cell.Status.FAIL);
    }

    private static boolean allPassed(Map<String, Map<Check, Cell>> cells) {
        return cells.values().stream().noneMatch(Preflight::failed);
    }

    /** Reach, agent start and the facts of its HELLO; empty when the node failed (its cells say why). */
    private Optional<NodeFacts> start(NodeSpec node, NodeJvm.Jit jit, Map<Check, Cell> row, Map<String, NodeSession> sessions) {
        try {
            row.put(Check.LOGIN, Cell.ok(starter.reach(node)));
        } catch (NodeException e) {
            row.put(Check.LOGIN, Cell.fail(e.getMessage()));
            return Optional.empty();
        }
        NodeFacts f;
        try {
            NodeSession session = starter.start(node, jit);
            sessions.put(node.name(), session);
            f = session.hello(60_000);
        } catch (IOException e) {
            String what = NodeSession.failedCheck(e).orElse("java");
            row.put(what.equals("java") ? Check.JAVA : Check.WORKDIR, Cell.fail(
                    NodeSession.failedCheck(e).isPresent() ? e.getMessage() : "the agent did not start: " + e.getMessage()));
            return Optional.empty();
        }
        row.put(Check.JAVA, Cell.ok(f.get(NodeFacts.JAVA).orElse("?")));
        Optional<String> workdirError = f.get(NodeFacts.WORKDIR_ERROR).or(() -> f.get(NodeFacts.LOCK_ERROR));
        row.put(Check.WORKDIR, workdirError.map(Cell::fail).orElse(Cell.ok("ok")));
        row.put(Check.DISK, f.get(NodeFacts.FREE_BYTES).filter(v -> v.matches("\\d+")).map(v -> disk(Long.parseLong(v)))
                .orElse(Cell.warn("unknown")));
        return failed(row) ? Optional.empty() : Optional.of(f);
    }

    private static Cell disk(long free) {
        String text = (free >> 20) + " MiB free";
        if (free < MIN_FREE_BYTES) {
            return Cell.fail(text);
        }
        return free < WARN_FREE_BYTES ? Cell.warn(text) : Cell.ok(text);
    }

    /**
     * rendezvous.addr, else the master's address as its backend found it (the HostName an SSH
     * session resolved its host to, a Slurm node's NodeAddr), else its host.
     */
    private String masterAddr() {
        NodeSpec master = spec.masterNode();
        return spec.rendezvous().addr()
                .or(() -> starter.address(master))
                .orElse(master.address().reachableAs().orElse("127.0.0.1"));
    }

    private OptionalInt rendezvous(FanOut fanOut, Map<String, Map<Check, Cell>> cells, Map<String, NodeSession> sessions,
                                   Map<String, String> ifaces) {
        NodeSpec master = spec.masterNode();
        NodeSession listener = sessions.get(master.name());
        String addr = masterAddr();
        int wanted = spec.rendezvous().port() instanceof JobSpec.MasterPort.Fixed f ? f.port() : 0;
        int timeoutMs = Math.min(5000, spec.ssh().connectTimeoutSeconds() * 1000);
        Answer listening;
        try {
            listening = listener.listen(addr, wanted);
            if (!listening.ok()) {
                cells.get(master.name()).put(Check.RENDEZVOUS, Cell.fail(listening.failure().get() + " (on the master)"));
                return OptionalInt.empty();
            }
        } catch (IOException e) {
            cells.get(master.name()).put(Check.RENDEZVOUS, Cell.fail("the rendezvous check did not run on the master: " + e.getMessage()));
            return OptionalInt.empty();
        }
        int port = (int) listening.number();
        String masterIface = listening.iface();
        try {
            fanOut.onEach(spec.nodes(), node -> {
                Answer answer;
                try {
                    // the master holds MASTER_ADDR itself: its listener already named the interface
                    answer = node == master && !masterIface.equals("-") ? Answer.done(0, masterIface)
                            : sessions.get(node.name()).connect(addr, port, timeoutMs);
                } catch (IOException e) {
                    answer = Answer.failed(e.getMessage());
                }
                Map<Check, Cell> row = cells.get(node.name());
                if (answer.ok()) {
                    String iface = answer.iface();
                    if (!iface.equals("-")) {
                        ifaces.put(node.name(), iface);
                    }
                    row.put(Check.RENDEZVOUS, Cell.ok(node == master ? "listens :" + port + " via " + iface : "via " + iface));
                } else {
                    row.put(Check.RENDEZVOUS, Cell.fail("cannot reach " + addr + ":" + port + ": " + answer.failure().get()));
                }
                return null;
            });
        } finally {
            try {
                listener.unlisten();
            } catch (IOException e) {
                // the agent is gone: its socket too
            }
        }
        return wanted == 0 ? OptionalInt.of(port) : OptionalInt.empty();
    }
}
