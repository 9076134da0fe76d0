package org.runjob.slurm;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.node.Cluster;
import org.runjob.node.NodeAccess;
import org.runjob.node.NodeException;
import org.runjob.node.NodeProcess;
import org.runjob.node.RunHandle;
import org.runjob.node.SchedulerStop;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;

/**
 * A job's nodes as one Slurm allocation: the first node reached asks {@code sinfo} about every
 * node (known, usable, its NodeAddr and GPUs) and makes the allocation ({@link SlurmCommands#salloc});
 * each node's agent then runs as one step of it ({@link SlurmCommands#step}). Slurm places,
 * tracks and cleans up; runjob's agents start, watch and stop the workers inside the steps.
 * Closing the cluster cancels the allocation. Inside an allocation of the user's ({@code SLURM_JOB_ID}
 * set: runjob in a salloc shell or an sbatch script) the steps go to that one, which runjob never
 * cancels, and no second allocation is asked for.
 */
public final class SlurmCluster implements Cluster {

    private static final Logger LOG = LogManager.getLogger(SlurmCluster.class);

    private final JobSpec spec;
    private final Map<String, String> env;
    private final String jobName;
    private final Consumer<String> progress;
    private final BooleanSupplier interrupted;
    private final Spawner spawner = new Spawner();
    /** The user's allocation runjob runs inside (its salloc or sbatch), if any: used, never asked for again. */
    private final Optional<String> inside;
    private final Optional<String> insideNodes;
    /** The whole environment runjob was given: the allocation's SLURM_ variables are read from it. */
    private final Map<String, String> allEnv;
    /** What runjob reads and asks of the job it runs inside. */
    private final Optional<InsideJob> insideJob;
    /** In a heterogeneous allocation runjob runs inside: each node's component. */
    private final Map<String, Integer> insideGroups = new ConcurrentHashMap<>();
    private final List<Process> steps = new CopyOnWriteArrayList<>();
    /** Told when the allocation's time limit is near ({@link #onEnding}); null: nobody asked. */
    private volatile Consumer<String> ending;
    private Map<String, SlurmNodeInfo> infos;
    private SlurmCommands commands;
    private Allocation allocation;
    private NodeException failed;
    private boolean closed;
    private int exitCode = 1;

    /**
     * @param progress    gets a line while the allocation waits in the queue
     * @param interrupted true once runjob is asked to stop (Ctrl-C): a waiting allocation is then withdrawn
     */
    public SlurmCluster(JobSpec spec, Map<String, String> env, Consumer<String> progress,
                        BooleanSupplier interrupted) {
        this.interrupted = interrupted;
        this.spec = spec;
        this.env = SlurmEnv.of(env);
        this.inside = SlurmEnv.jobId(env);
        this.insideNodes = SlurmEnv.nodeList(env);
        this.allEnv = Map.copyOf(env);
        this.insideJob = inside.map(id -> new InsideJob(id, insideNodes, this.env, allEnv));
        this.jobName = "runjob-" + spec.name();
        this.progress = progress;
    }

    @Override
    public NodeAccess node(NodeSpec node) {
        if (!(node.address() instanceof SlurmAddress slurm)) {
            throw new IllegalArgumentException("node " + node.name() + " is not a Slurm node");
        }
        return new SlurmNode(slurm.node());
    }

    /**
     * The allocation's job id, once made: {@code "slurm": {"job_id": ID}} in the summary; in a batch
     * job Slurm restarted, also how often ({@code "restart_count"}, SLURM_RESTART_COUNT), so a
     * reader can tell the job running again from the attempt this summary ended.
     */
    @Override
    public synchronized Optional<RunHandle> handle() {
        Optional<String> restarts = SlurmEnv.restartCount(allEnv);
        return Optional.ofNullable(allocation).map(a -> new RunHandle("slurm", restarts.isPresent()
                ? Map.of("job_id", a.jobId(), "restart_count", restarts.get()) : Map.of("job_id", a.jobId())));
    }

    /** What slurmctld says of the allocation, when it has ended: its state, and who cancelled it. */
    @Override
    public Optional<String> gone() {
        Allocation a;
        synchronized (this) {
            a = allocation;
        }
        if (a == null) {
            return Optional.empty();
        }
        // a job being cancelled reads COMPLETING until its steps are gone: wait for the state it ends in
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SlurmEvents.SETTLE_S);
        while (true) {
            String out = SlurmClient.job(a.jobId(), env).orElse("");
            if (!SlurmEvents.ending(out) || System.nanoTime() > deadline) {
                return SlurmEvents.gone(a.jobId(), out);
            }
            try {
                Thread.sleep(250);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return SlurmEvents.gone(a.jobId(), out);
            }
        }
    }

    @Override
    public Optional<SchedulerStop> stoppedBy() {
        return insideJob.flatMap(InsideJob::stoppedBy);
    }

    @Override
    public Optional<String> keepOff(Set<String> machines) {
        return insideJob.flatMap(j -> j.keepOff(machines));
    }

    @Override
    public Optional<String> cancelAfterStop() {
        return insideJob.flatMap(InsideJob::cancelAfterStop);
    }

    @Override
    public Optional<String> requeueAfterTimeLimit() {
        return insideJob.flatMap(j -> j.requeueAfterTimeLimit(spec.settings(SlurmSettings.class)));
    }

    /** The node's NodeAddr, once sinfo answered. */
    synchronized Optional<String> address(String node) {
        return Optional.ofNullable(infos).map(i -> i.get(node)).map(SlurmNodeInfo::address);
    }

    /** Asks sinfo about the nodes and allocates them, once; a failure is remembered and given to every node. */
    private synchronized Allocation allocation() throws NodeException {
        if (allocation != null) {
            return allocation;
        }
        if (failed == null && closed) {
            failed = new NodeException("the run is ending");
        }
        if (failed == null && spec.nodesUnnamed()) {
            failed = new NodeException("the job's nodes are given as a count: this command needs them named (runjob names them"
                    + " when it runs inside the allocation)");
        }
        if (failed == null) {
            try {
                infos = sinfo();
                Map<String, Integer> gpus = new LinkedHashMap<>();
                infos.forEach((n, info) -> gpus.put(n, info.gpus()));
                commands = new SlurmCommands(spec, SlurmCommands.shapesOf(spec, gpus));
                List<String> problems = problems();
                if (!problems.isEmpty()) {
                    failed = new NodeException(String.join("; ", problems));
                } else if (inside.isPresent()) {
                    List<String> outside = outsideTheAllocation();
                    if (!outside.isEmpty()) {
                        failed = new NodeException("runjob runs inside Slurm job " + inside.get() + ", which does not hold node"
                                + (outside.size() == 1 ? " " : "s ") + String.join(", ", outside)
                                + " (its nodes: " + insideNodes.orElse("?") + "); list only its nodes, or run runjob outside it");
                    } else {
                        LOG.info("inside slurm job {}: its steps go there; runjob asks for no allocation", inside.get());
                        allocation = Allocation.existing(inside.get(), env);
                        watchTimeLimit();
                        return allocation;
                    }
                } else {
                    allocation = allocate();
                    watchTimeLimit();
                    return allocation;
                }
            } catch (NodeException e) {
                failed = e;
            }
        }
        throw failed;
    }

    /**
     * Stops the run gracefully {@code slurm.stop_before_limit_s} ahead of the allocation's time
     * limit ({@link TimeLimitWatch}), when someone asked ({@link #onEnding}).
     */
    private void watchTimeLimit() {
        Consumer<String> stop = ending;
        if (stop != null) {
            TimeLimitWatch.start(allocation.jobId(), env, spec.settings(SlurmSettings.class).stopBeforeLimitSeconds(), stop, this::isClosed);
        }
    }

    private synchronized boolean isClosed() {
        return closed;
    }

    @Override
    public void onEnding(Consumer<String> stop) {
        ending = stop;
    }

    /** salloc, with the hostfile (a private temporary file, gone afterwards) when the layout needs one. */
    private Allocation allocate() throws NodeException {
        Optional<List<String>> hosts = commands.hostfile();
        if (hosts.isEmpty()) {
            return Allocation.make(commands.salloc(jobName), env, spawner, progress, interrupted);
        }
        Path file = null;
        try {
            file = Files.createTempFile("runjob-hosts-", ".txt");
            Files.write(file, hosts.get());
            Map<String, String> withHosts = new LinkedHashMap<>(env);
            withHosts.put("SLURM_HOSTFILE", file.toString());
            return Allocation.make(commands.salloc(jobName), withHosts, spawner, progress, interrupted);
        } catch (IOException e) {
            throw new NodeException("cannot write the Slurm hostfile: " + e.getMessage(), e);
        } finally {
            if (file != null) {
                try {
                    Files.deleteIfExists(file);
                } catch (IOException e) {
                    LOG.debug("cannot remove {}: {}", file, e.getMessage());
                }
            }
        }
    }

    /**
     * The job's nodes that the allocation runjob runs inside does not hold ({@code scontrol show
     * hostnames}). In a heterogeneous allocation ({@code SLURM_HET_SIZE}: a submitted job of nodes
     * with several GPU counts, or the user's) each node's component is noted for its step's
     * {@code --het-group}.
     */
    private List<String> outsideTheAllocation() throws NodeException {
        List<String> held = new ArrayList<>();
        int components = Optional.ofNullable(allEnv.get("SLURM_HET_SIZE")).filter(h -> h.matches("\\d+")).map(Integer::parseInt).orElse(1);
        if (components > 1) {
            for (int k = 0; k < components; k++) {
                String list = allEnv.get("SLURM_JOB_NODELIST_HET_GROUP_" + k);
                if (list != null) {
                    for (String node : SlurmClient.hostnames(list, env)) {
                        held.add(node);
                        insideGroups.putIfAbsent(node, k);
                    }
                }
            }
        } else if (insideNodes.isPresent()) {
            held.addAll(SlurmClient.hostnames(insideNodes.get(), env));
        } else {
            return List.of();
        }
        return spec.nodes().stream().map(NodeSpec::name).filter(n -> !held.contains(n)).toList();
    }

    /**
     * What a Slurm client command printed ({@link SlurmCommands#run}), once it succeeded.
     *
     * @param what the command as a failure names it
     * @throws NodeException naming the command and its output when it failed, or that it could not run
     */
    private String output(List<String> argv, String what) throws NodeException {
        try {
            SlurmClient.Ran ran = SlurmClient.run(argv, env);
            if (!ran.ok()) {
                throw new NodeException(what + " failed: " + ran.out().trim());
            }
            return ran.out();
        } catch (IOException e) {
            throw new NodeException("cannot run " + argv.get(0) + " (is Slurm's client installed here?): " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NodeException("interrupted");
        }
    }

    private List<String> problems() {
        List<String> problems = new ArrayList<>();
        for (NodeSpec n : spec.nodes()) {
            SlurmNodeInfo info = infos.get(n.name());
            if (info == null) {
                problems.add("Slurm has no node named '" + n.name() + "'");
            } else if (info.unusable()) {
                problems.add("Slurm node " + n.name() + " is " + info.state());
            }
        }
        return problems;
    }

    private Map<String, SlurmNodeInfo> sinfo() throws NodeException {
        List<String> argv = List.of("sinfo", "--noheader", "--Node", "--nodes=" + String.join(",", spec.nodes().stream().map(NodeSpec::name).toList()),
                "--format=" + SlurmNodeInfo.FORMAT);
        return SlurmNodeInfo.parse(output(argv, "sinfo"));
    }

    @Override
    public synchronized void ended(int exitCode) {
        this.exitCode = exitCode;
    }

    /** SLURM_STEP_GPUS: the physical GPUs of each agent's step ({@link SlurmGpus}). */
    @Override
    public List<String> agentVariables() {
        return SlurmGpus.INSTANCE.variables();
    }

    /** Ends the allocation with the run's exit code ({@link #ended}; 1 without one), then lets go of the steps. */
    @Override
    public void close() {
        Allocation a;
        int code;
        synchronized (this) {
            closed = true;
            a = allocation;
            code = exitCode;
        }
        if (a != null) {
            a.close(code);
        }
        steps.forEach(Process::destroy);
        spawner.close();
    }

    /** One node of the allocation: its agent runs as a step there. */
    private final class SlurmNode implements NodeAccess {
        private final String name;

        SlurmNode(String name) {
            this.name = name;
        }

        @Override
        public String reach() throws NodeException {
            Allocation a = allocation();
            return "slurm job " + a.jobId() + " on " + name + address().map(x -> " (" + x + ")").orElse("");
        }

        @Override
        public NodeProcess start(List<String> argv, OutputStream stderr, int timeoutMs) throws NodeException {
            Allocation a = allocation();
            Process p;
            try {
                List<String> step = a.borrowed()
                        ? commands.borrowedStep(a.jobId(), name, argv, Optional.ofNullable(insideGroups.get(name)).map(OptionalInt::of)
                                .orElse(OptionalInt.empty()))
                        : commands.step(a.jobId(), name, argv);
                p = spawner.start(step, env, "KILL");
            } catch (IOException e) {
                throw new NodeException("cannot run srun: " + e.getMessage(), e);
            }
            steps.add(p);
            Thread err = new Thread(() -> copy(p.getErrorStream(), stderr), "srun-err-" + name);
            err.setDaemon(true);
            err.start();
            return NodeProcess.of(p.getInputStream(), p.getOutputStream(), () -> {
                p.destroy();
                steps.remove(p);
            });
        }

        @Override
        public Optional<String> address() {
            return SlurmCluster.this.address(name);
        }
    }

    /** Copies a step's stderr to {@code out} until its end, then closes {@code out}: the reader knows it has every line. */
    private static void copy(InputStream in, OutputStream out) {
        try (in; out) {
            in.transferTo(out);
            out.flush();
        } catch (IOException e) {
            // the step ended
        }
    }
}
