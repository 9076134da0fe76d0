package org.runjob.spec;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * A job as the user asked for it (the blueprint): valid, composed, interpolated and overridden,
 * with defaults filled in. Ranks are not assigned here; that is the planner's job.
 *
 * @param backend the backend that runs it ({@code backend:}) and that backend's settings
 * @param strictGpuLeases {@code gpu_leases: strict}: a listed GPU that another run holds fails preflight (else a warning)
 * @param runsShareWorkdir every run works in the workdir itself, one at a time ({@code runs_share_workdir}); else each
 *                 run works in a directory of its own under it
 * @param relay  whether nodes pass the job's files on to each other ({@code relay})
 * @param source the job file this spec was loaded from
 * @param outputs paths relative to the run's directory brought from every node into the run folder when the run ends
 * @param outputsMaxBytes the most bytes of outputs brought from one node ({@code outputs_max_gib})
 * @param spares  node entries checked in preflight that run nothing until a lost node's place needs one ({@code spares})
 * @param gpuBind which of its node's GPUs a worker sees ({@code gpu_bind})
 */
public record JobSpec(
        String name,
        List<NodeSpec> nodes,
        RendezvousSpec rendezvous,
        EntrypointSpec entrypoint,
        String workdir,
        boolean runsShareWorkdir,
        List<ShippedFile> files,
        Map<String, String> env,
        SshSpec ssh,
        FailureSpec failure,
        String logsDir,
        Optional<Pattern> metric,
        BackendUse backend,
        boolean strictGpuLeases,
        Relay relay,
        Path source,
        List<String> outputs,
        long outputsMaxBytes,
        List<NodeSpec> spares,
        ObserveSpec observe,
        GpuBind gpuBind) {

    /** Outputs brought from one node by default: 10 GiB, more than a checkpoint or two, less than a disk. */
    public static final long DEFAULT_OUTPUTS_MAX_BYTES = 10L << 30;


    public JobSpec(String name, List<NodeSpec> nodes, RendezvousSpec rendezvous, EntrypointSpec entrypoint, String workdir,
                   boolean runsShareWorkdir, List<ShippedFile> files, Map<String, String> env, SshSpec ssh, FailureSpec failure,
                   String logsDir, Optional<Pattern> metric, BackendUse backend, boolean strictGpuLeases, Relay relay, Path source) {
        this(name, nodes, rendezvous, entrypoint, workdir, runsShareWorkdir, files, env, ssh, failure, logsDir, metric, backend, strictGpuLeases,
                relay, source, List.of(), DEFAULT_OUTPUTS_MAX_BYTES, List.of(), ObserveSpec.DEFAULT, GpuBind.NODE);
    }

    /**
     * Which of a node's GPUs a worker sees ({@code gpu_bind}): {@link #NODE} every one of them, as
     * torchrun gives them (the program picks its device by LOCAL_RANK); {@link #WORKER} its own
     * share, the node's GPUs split evenly among its workers in local-rank order, as Slurm's
     * {@code --gpus-per-task} with {@code --gpu-bind} gives a task.
     */
    public enum GpuBind {
        NODE, WORKER
    }

    /**
     * What runjob watches inside a running job ({@code observe}): each node's GPUs sampled every
     * {@code intervalSeconds} (0: never), a rank flagged as a straggler when its step time stays
     * more than {@code stragglerPct} % above its peers' median for 3 windows of
     * {@code stragglerWindowSeconds} in a row, and the latest samples written in
     * Prometheus' text format to {@code prometheus}, when given; {@code maxSteps}, when given, is
     * the step the training ends at, so progress and an ETA can be shown; {@code sources} are the
     * registered observation sources each node also samples every interval ({@code org.runjob.observe.Source}).
     */
    public record ObserveSpec(double intervalSeconds, int stragglerPct, double stragglerWindowSeconds, Optional<String> prometheus,
                              Optional<Long> maxSteps, List<String> sources) {
        public static final ObserveSpec DEFAULT = new ObserveSpec(5, 20, 10, Optional.empty());

        public ObserveSpec {
            if (intervalSeconds < 0 || stragglerPct < 1 || stragglerWindowSeconds <= 0) {
                throw new IllegalArgumentException("observe.interval_s is >= 0, observe.straggler_pct >= 1, observe.straggler_window_s > 0");
            }
            Objects.requireNonNull(prometheus, "prometheus");
            Objects.requireNonNull(maxSteps, "maxSteps");
            sources = List.copyOf(sources);
        }

        public ObserveSpec(double intervalSeconds, int stragglerPct, double stragglerWindowSeconds, Optional<String> prometheus,
                           Optional<Long> maxSteps) {
            this(intervalSeconds, stragglerPct, stragglerWindowSeconds, prometheus, maxSteps, List.of());
        }

        public ObserveSpec(double intervalSeconds, int stragglerPct, double stragglerWindowSeconds, Optional<String> prometheus) {
            this(intervalSeconds, stragglerPct, stragglerWindowSeconds, prometheus, Optional.empty());
        }

        /** The sampling interval in milliseconds; 0 when sampling is off. */
        public long intervalMillis() {
            return Math.round(intervalSeconds * 1000);
        }
    }

    /** The same job with {@code more} arguments after the entrypoint's own. */
    public JobSpec withEntrypointArgs(List<String> more) {
        return new JobSpec(name, nodes, rendezvous, entrypoint.withArgs(more), workdir, runsShareWorkdir, files, env, ssh, failure, logsDir, metric,
                backend, strictGpuLeases, relay, source, outputs, outputsMaxBytes, spares, observe, gpuBind);
    }

    /** The same job with {@code nodes} (the master kept by name, or the first) and {@code spares}. */
    private JobSpec with(List<NodeSpec> nodes, String master, List<NodeSpec> spares) {
        return new JobSpec(name, nodes, new RendezvousSpec(master, rendezvous.addr(), rendezvous.port()), entrypoint, workdir, runsShareWorkdir,
                files, env, ssh, failure, logsDir, metric, backend, strictGpuLeases, relay, source, outputs, outputsMaxBytes, spares, observe, gpuBind);
    }

    /**
     * The job as preflight checks it: the spares after the nodes, as nodes (reached, shipped to,
     * their environment and GPUs checked, the rendezvous reached from them), none left spare.
     */
    public JobSpec withSparesAsNodes() {
        List<NodeSpec> all = new ArrayList<>(nodes);
        all.addAll(spares);
        return with(all, rendezvous.master(), List.of());
    }

    /** The job without the spares {@code dropped}. */
    public JobSpec withoutSpares(Set<String> dropped) {
        return with(nodes, rendezvous.master(), spares.stream().filter(s -> !dropped.contains(s.name())).toList());
    }

    /** The job without the nodes {@code gone}; the first node left is the master when the master is gone. */
    public JobSpec without(Set<String> gone) {
        List<NodeSpec> left = nodes.stream().filter(n -> !gone.contains(n.name())).toList();
        return with(left, gone.contains(rendezvous.master()) ? left.get(0).name() : rendezvous.master(), spares);
    }

    /**
     * The job with {@code spare} in node {@code lost}'s place (its node rank; the master when
     * {@code lost} was), and no longer a spare.
     */
    public JobSpec withStandIn(String lost, NodeSpec spare) {
        List<NodeSpec> replaced = new ArrayList<>();
        for (NodeSpec n : nodes) {
            replaced.add(n.name().equals(lost) ? spare : n);
        }
        if (replaced.equals(nodes)) {
            throw new IllegalArgumentException("no node " + lost + " to stand in for");
        }
        List<NodeSpec> left = new ArrayList<>(spares);
        left.removeIf(s -> s.name().equals(spare.name()));
        return with(replaced, rendezvous.master().equals(lost) ? spare.name() : rendezvous.master(), left);
    }

    /** The directory under a workdir that holds each run's own directory. */
    public static final String RUN_DIRS = "runs";

    /** {@code node}'s workdir as the job file gives it: the node's own, else the job's. */
    public String workdirOf(NodeSpec node) {
        return node.workdir().orElse(workdir);
    }

    /**
     * Where run {@code runId} works on {@code node}: its own directory {@code WORKDIR/runs/RUN}, or
     * the workdir itself when the job's runs share it ({@code runs_share_workdir}) or there is no run.
     */
    public String runDirOf(NodeSpec node, Optional<String> runId) {
        return ownRunDirOf(node, runId).orElse(workdirOf(node));
    }

    /** Run {@code runId}'s own directory on {@code node}, {@code WORKDIR/runs/RUN}; empty when it works in the workdir itself. */
    public Optional<String> ownRunDirOf(NodeSpec node, Optional<String> runId) {
        String base = workdirOf(node);
        return runId.filter(r -> !runsShareWorkdir).map(r -> (base.endsWith("/") ? base : base + "/") + RUN_DIRS + "/" + r);
    }

    public JobSpec {
        Objects.requireNonNull(name, "name");
        nodes = List.copyOf(nodes);
        if (nodes.isEmpty()) {
            throw new IllegalArgumentException("a job has at least one node");
        }
        Objects.requireNonNull(rendezvous, "rendezvous");
        Objects.requireNonNull(entrypoint, "entrypoint");
        Objects.requireNonNull(workdir, "workdir");
        files = List.copyOf(files);
        outputs = List.copyOf(outputs);
        if (outputsMaxBytes <= 0) {
            throw new IllegalArgumentException("outputs_max_gib is positive");
        }
        spares = List.copyOf(spares);
        env = Collections.unmodifiableMap(new LinkedHashMap<>(env));
        Objects.requireNonNull(ssh, "ssh");
        Objects.requireNonNull(failure, "failure");
        Objects.requireNonNull(logsDir, "logsDir");
        Objects.requireNonNull(backend, "backend");
        if (nodes.stream().noneMatch(n -> n.name().equals(rendezvous.master()))) {
            throw new IllegalArgumentException("rendezvous master '" + rendezvous.master() + "' is not a node");
        }
    }

    /**
     * The backend a job names and its settings, which only that backend reads.
     *
     * @param nodesUnnamed the nodes were given as a count: the backend names them when the run starts ({@link #withNodes})
     */
    public record BackendUse(String name, BackendSettings settings, boolean nodesUnnamed) {
        /** The backend a job file that names none runs on. */
        public static final String DEFAULT = "ssh";

        public BackendUse {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(settings, "settings");
        }

        /** The default backend, without settings. */
        public static BackendUse ssh() {
            return new BackendUse(DEFAULT, BackendSettings.NONE, false);
        }
    }

    /** The settings of the job's backend, as the type that backend binds them to. */
    public <T extends BackendSettings> T settings(Class<T> type) {
        if (!type.isInstance(backend.settings())) {
            throw new IllegalArgumentException("job " + name + " runs on backend " + backend.name() + ", which has no " + type.getSimpleName());
        }
        return type.cast(backend.settings());
    }

    /** The node that hosts the rendezvous (rank 0's side of MASTER_ADDR). */
    public NodeSpec masterNode() {
        return node(rendezvous.master()).orElseThrow();
    }

    /** The node named {@code name} among {@link #nodes} (not the spares). */
    public Optional<NodeSpec> node(String name) {
        return nodes.stream().filter(n -> n.name().equals(name)).findFirst();
    }

    /** Where workers rendezvous: {@code master} is a node name; {@code addr} overrides its host. */
    public record RendezvousSpec(String master, Optional<String> addr, MasterPort port) {
        public RendezvousSpec {
            Objects.requireNonNull(master, "master");
            Objects.requireNonNull(addr, "addr");
            Objects.requireNonNull(port, "port");
        }
    }

    /** The rendezvous port: a number, or chosen free on the master at launch. */
    public sealed interface MasterPort {
        record Fixed(int port) implements MasterPort {
            public Fixed {
                if (port < 1 || port > 65535) {
                    throw new IllegalArgumentException("port out of range: " + port);
                }
            }

            @Override
            public String toString() {
                return Integer.toString(port);
            }
        }

        record Auto() implements MasterPort {
            @Override
            public String toString() {
                return "auto";
            }
        }
    }

    /** A file or directory shipped into each node's workdir as {@code destination}. */
    public record ShippedFile(Path source, String destination) {
        public ShippedFile {
            Objects.requireNonNull(source, "source");
            Objects.requireNonNull(destination, "destination");
        }
    }

    /**
     * The name the {@code i}th of nodes given as a count ({@code nodes: [{count: N}]}) goes by until
     * the backend names it ({@link #withNodes}): what a dry run shows.
     */
    public static String countedNodeName(int i) {
        return "NODE" + i;
    }

    /** True while the nodes were given as a count and have no names yet: the backend gives them ({@link #withNodes}). */
    public boolean nodesUnnamed() {
        return backend.nodesUnnamed();
    }

    /**
     * The job with the nodes given as a count named {@code names} (in the order the backend picked
     * them), each reached at {@code address.apply(name)}: node {@code i} is {@code names[i]}, the
     * master the first.
     */
    public JobSpec withNodes(List<String> names, Function<String, NodeAddress> address) {
        if (!nodesUnnamed() || names.size() != nodes.size()) {
            throw new IllegalArgumentException("naming " + names.size() + " of " + nodes.size() + " nodes given as a count");
        }
        List<NodeSpec> named = new ArrayList<>();
        for (int i = 0; i < nodes.size(); i++) {
            NodeSpec n = nodes.get(i);
            named.add(new NodeSpec(names.get(i), address.apply(names.get(i)), n.gpus(), n.workers(), n.workdir(), n.env(), n.environment()));
        }
        return new JobSpec(name, named, new RendezvousSpec(names.get(0), rendezvous.addr(), rendezvous.port()), entrypoint, workdir,
                runsShareWorkdir, files, env, ssh, failure, logsDir, metric, new BackendUse(backend.name(), backend.settings(), false),
                strictGpuLeases, relay, source, outputs, outputsMaxBytes, spares, observe, gpuBind);
    }

    /** How runjob logs in to nodes. */
    public record SshSpec(Optional<String> identity, String knownHosts, HostKeyPolicy hostKeyPolicy,
                          int connectTimeoutSeconds, Optional<String> passwordEnv) {
        public static final int DEFAULT_CONNECT_TIMEOUT_S = 10;
        public static final String DEFAULT_KNOWN_HOSTS = "~/.ssh/known_hosts";
    }

    /** What to do with unknown and changed host keys. */
    public enum HostKeyPolicy {
        STRICT("strict"), ACCEPT_NEW("accept-new");

        private final String yaml;

        HostKeyPolicy(String yaml) {
            this.yaml = yaml;
        }

        static HostKeyPolicy of(String yaml) {
            for (HostKeyPolicy p : values()) {
                if (p.yaml.equals(yaml)) {
                    return p;
                }
            }
            throw new IllegalArgumentException("unknown host key policy " + yaml);
        }
    }

    /**
     * {@code failure}: the grace from SIGTERM to SIGKILL, the restarts, the hang timeout (0: off),
     * and the heartbeat timeout, after which a silent agent is lost and an agent that hears
     * nothing from runjob stops its workers.
     *
     * @param crashLoopSeconds   a failure this soon after its attempt's start counts toward a crash
     *                           loop (the same failure twice in a row stops the restarts); 0: never
     * @param retryExitCodes     exit codes always worth a restart, never a crash loop
     * @param waitForNodeSeconds how long a restart waits for a lost node no spare stands in for to answer again; 0: not at all
     * @param minNodes           the fewest nodes a restart may run on without the lost ones ({@code min_nodes}); 0: never fewer
     * @param healthCheck        commands that must exit 0 on a node before each attempt ({@code health_check})
     * @param quarantineSeconds  how long a lost or unhealthy node is avoided ({@code quarantine_s}); 0: never quarantined
     */
    public record FailureSpec(double gracePeriodSeconds, int maxRestarts, double hangTimeoutSeconds, int heartbeatTimeoutSeconds,
                              int crashLoopSeconds, Set<Integer> retryExitCodes, int waitForNodeSeconds, int minNodes,
                              List<String> healthCheck, int quarantineSeconds) {
        public static final double DEFAULT_GRACE_S = 10;
        public static final int DEFAULT_QUARANTINE_S = 3600;
        public static final int DEFAULT_HEARTBEAT_S = 15;
        public static final int DEFAULT_CRASH_LOOP_S = 60;

        public FailureSpec {
            if (gracePeriodSeconds < 0 || maxRestarts < 0 || hangTimeoutSeconds < 0 || heartbeatTimeoutSeconds <= 0 || crashLoopSeconds < 0
                    || waitForNodeSeconds < 0 || minNodes < 0 || quarantineSeconds < 0) {
                throw new IllegalArgumentException("grace period, restarts, hang timeout, crash loop and node wait are >= 0,"
                        + " the heartbeat timeout > 0");
            }
            retryExitCodes = Set.copyOf(retryExitCodes);
            healthCheck = List.copyOf(healthCheck);
        }

        public FailureSpec(double gracePeriodSeconds, int maxRestarts, double hangTimeoutSeconds, int heartbeatTimeoutSeconds,
                           int crashLoopSeconds, Set<Integer> retryExitCodes) {
            this(gracePeriodSeconds, maxRestarts, hangTimeoutSeconds, heartbeatTimeoutSeconds, crashLoopSeconds, retryExitCodes, 0, 0, List.of(),
                    DEFAULT_QUARANTINE_S);
        }

        public FailureSpec(double gracePeriodSeconds, int maxRestarts) {
            this(gracePeriodSeconds, maxRestarts, 0, DEFAULT_HEARTBEAT_S, DEFAULT_CRASH_LOOP_S, Set.of());
        }

        public long heartbeatTimeoutMillis() {
            return heartbeatTimeoutSeconds * 1000L;
        }
    }
}
