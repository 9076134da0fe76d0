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
import java.util.regex.Pattern;

/**
 * A job as the user asked for it (the blueprint): valid, composed, interpolated and overridden,
 * with defaults filled in. Ranks are not assigned here; that is the planner's job.
 *
 * @param slurm  present when the job runs under Slurm ({@code backend: slurm}); its nodes are then Slurm nodes
 * @param strictGpuLeases {@code gpu_leases: strict}: a listed GPU that another run holds fails preflight (else a warning)
 * @param runsShareWorkdir every run works in the workdir itself, one at a time ({@code runs_share_workdir}); else each
 *                 run works in a directory of its own under it
 * @param relay  whether nodes pass the job's files on to each other ({@code relay})
 * @param source the job file this spec was loaded from
 * @param outputs paths relative to the run's directory brought from every node into the run folder when the run ends
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
        Optional<SlurmSpec> slurm,
        boolean strictGpuLeases,
        Relay relay,
        Path source,
        List<String> outputs) {

    public JobSpec(String name, List<NodeSpec> nodes, RendezvousSpec rendezvous, EntrypointSpec entrypoint, String workdir,
                   boolean runsShareWorkdir, List<ShippedFile> files, Map<String, String> env, SshSpec ssh, FailureSpec failure,
                   String logsDir, Optional<Pattern> metric, Optional<SlurmSpec> slurm, boolean strictGpuLeases, Relay relay, Path source) {
        this(name, nodes, rendezvous, entrypoint, workdir, runsShareWorkdir, files, env, ssh, failure, logsDir, metric, slurm, strictGpuLeases,
                relay, source, List.of());
    }

    /** The same job with {@code more} arguments after the entrypoint's own. */
    public JobSpec withEntrypointArgs(List<String> more) {
        return new JobSpec(name, nodes, rendezvous, entrypoint.withArgs(more), workdir, runsShareWorkdir, files, env, ssh, failure, logsDir, metric,
                slurm, strictGpuLeases, relay, source, outputs);
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
        env = Collections.unmodifiableMap(new LinkedHashMap<>(env));
        Objects.requireNonNull(ssh, "ssh");
        Objects.requireNonNull(failure, "failure");
        Objects.requireNonNull(logsDir, "logsDir");
        Objects.requireNonNull(slurm, "slurm");
        if (nodes.stream().noneMatch(n -> n.name().equals(rendezvous.master()))) {
            throw new IllegalArgumentException("rendezvous master '" + rendezvous.master() + "' is not a node");
        }
    }

    /** The job file's {@code backend:}: "slurm" when it has Slurm settings, else "ssh". */
    public String backend() {
        return slurm.isPresent() ? "slurm" : "ssh";
    }

    /** The node that hosts the rendezvous (rank 0's side of MASTER_ADDR). */
    public NodeSpec masterNode() {
        return nodes.stream().filter(n -> n.name().equals(rendezvous.master())).findFirst().orElseThrow();
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
     * {@code backend: slurm}'s settings: what the allocation asks for. Empty values are the
     * cluster's defaults.
     *
     * @param allocArgs more arguments for {@code salloc} (e.g. {@code --mem=0}, {@code --constraint=a100})
     * @param srunArgs  more arguments for each node's {@code srun} step
     */
    /**
     * @param stopBeforeLimitSeconds a submitted run stops gracefully this long before its time limit
     * @param cpusPerWorker          CPUs the allocation holds per worker (Slurm's default: one)
     */
    public record SlurmSpec(Optional<String> partition, Optional<String> account, Optional<String> time, Optional<String> qos,
                            List<String> allocArgs, List<String> srunArgs, int stopBeforeLimitSeconds, Optional<Integer> cpusPerWorker,
                            boolean countedNodes) {
        public static final int DEFAULT_STOP_BEFORE_LIMIT_S = 90;

        public SlurmSpec {
            allocArgs = List.copyOf(allocArgs);
            srunArgs = List.copyOf(srunArgs);
        }

        public SlurmSpec(Optional<String> partition, Optional<String> account, Optional<String> time, Optional<String> qos,
                         List<String> allocArgs, List<String> srunArgs, int stopBeforeLimitSeconds, Optional<Integer> cpusPerWorker) {
            this(partition, account, time, qos, allocArgs, srunArgs, stopBeforeLimitSeconds, cpusPerWorker, false);
        }

        public SlurmSpec(Optional<String> partition, Optional<String> account, Optional<String> time, Optional<String> qos,
                         List<String> allocArgs, List<String> srunArgs) {
            this(partition, account, time, qos, allocArgs, srunArgs, DEFAULT_STOP_BEFORE_LIMIT_S, Optional.empty());
        }
    }

    /**
     * The name the {@code i}th of nodes given as a count ({@code nodes: [{count: N}]}) goes by until
     * the allocation names it ({@link #withNodeNames}): what a dry run shows.
     */
    public static String countedNodeName(int i) {
        return "NODE" + i;
    }

    /** True while the nodes were given as a count and have no names yet: the allocation gives them ({@link #withNodeNames}). */
    public boolean nodesUnnamed() {
        return slurm.map(SlurmSpec::countedNodes).orElse(false);
    }

    /**
     * The job with the nodes given as a count named {@code names} (a Slurm allocation's, in its
     * order): node {@code i} is {@code names[i]}, the master the first.
     */
    public JobSpec withNodeNames(List<String> names) {
        if (!nodesUnnamed() || names.size() != nodes.size()) {
            throw new IllegalArgumentException("naming " + names.size() + " of " + nodes.size() + " nodes given as a count");
        }
        List<NodeSpec> named = new ArrayList<>();
        for (int i = 0; i < nodes.size(); i++) {
            NodeSpec n = nodes.get(i);
            named.add(new NodeSpec(names.get(i), new NodeAddress.Slurm(names.get(i)), n.gpus(), n.workers(), n.workdir(), n.env(), n.environment()));
        }
        SlurmSpec s = slurm.get();
        return new JobSpec(name, named, new RendezvousSpec(names.get(0), rendezvous.addr(), rendezvous.port()), entrypoint, workdir,
                runsShareWorkdir, files, env, ssh, failure, logsDir, metric, Optional.of(new SlurmSpec(s.partition(), s.account(), s.time(),
                s.qos(), s.allocArgs(), s.srunArgs(), s.stopBeforeLimitSeconds(), s.cpusPerWorker(), false)), strictGpuLeases, relay, source,
                outputs);
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

    /** Supervision settings: seconds from SIGTERM to SIGKILL, and whole-group restarts. */
    /** @param hangTimeoutSeconds a run whose ranks all stay silent this long is hung; 0: never */
    /**
     * {@code failure}: the grace from SIGTERM to SIGKILL, the restarts, the hang timeout (0: off),
     * and the heartbeat timeout, after which a silent agent is lost and an agent that hears
     * nothing from runjob stops its workers.
     */
    /**
     * @param crashLoopSeconds a failure this soon after its attempt's start counts toward a crash
     *                         loop (the same failure twice in a row stops the restarts); 0: never
     * @param retryExitCodes   exit codes always worth a restart, never a crash loop
     */
    public record FailureSpec(double gracePeriodSeconds, int maxRestarts, double hangTimeoutSeconds, int heartbeatTimeoutSeconds,
                              int crashLoopSeconds, Set<Integer> retryExitCodes) {
        public static final double DEFAULT_GRACE_S = 10;
        public static final int DEFAULT_HEARTBEAT_S = 15;
        public static final int DEFAULT_CRASH_LOOP_S = 60;

        public FailureSpec {
            if (gracePeriodSeconds < 0 || maxRestarts < 0 || hangTimeoutSeconds < 0 || heartbeatTimeoutSeconds <= 0 || crashLoopSeconds < 0) {
                throw new IllegalArgumentException("grace period, restarts, hang timeout and crash loop are >= 0, the heartbeat timeout > 0");
            }
            retryExitCodes = Set.copyOf(retryExitCodes);
        }

        public FailureSpec(double gracePeriodSeconds, int maxRestarts) {
            this(gracePeriodSeconds, maxRestarts, 0, DEFAULT_HEARTBEAT_S, DEFAULT_CRASH_LOOP_S, Set.of());
        }

        public long heartbeatTimeoutMillis() {
            return heartbeatTimeoutSeconds * 1000L;
        }
    }
}
