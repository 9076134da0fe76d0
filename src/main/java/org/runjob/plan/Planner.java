package org.runjob.plan;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.stream.Collectors;

import org.runjob.spec.EntrypointSpec;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;
import org.runjob.spec.WorkerVariables;

/**
 * Turns a {@link JobSpec} into a {@link LaunchPlan}. Pure: it reads no clock, environment, file or
 * network; the run id and the probed {@link Inventory} are inputs.
 *
 * <p>Rank rules:
 * <ol>
 *   <li>Nodes keep their order in the job file: the k-th node has node rank k.</li>
 *   <li>A node runs {@code workers} processes, else one per GPU (listed, or found when {@code all}).</li>
 *   <li>Global ranks are contiguous in node order: 2 + 3 workers give ranks 0-1 and 2-4, WORLD_SIZE 5.</li>
 *   <li>LOCAL_RANK is the position within the node; LOCAL_WORLD_SIZE the node's worker count.</li>
 * </ol>
 *
 * <p>Environment of each worker, in this order: RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
 * NODE_RANK, GROUP_RANK, GROUP_WORLD_SIZE, ROLE_RANK, ROLE_WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
 * CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER=PCI_BUS_ID, TORCHELASTIC_RUN_ID, ROLE_NAME=default,
 * TORCHELASTIC_USE_AGENT_STORE=False (workers make their own store, as with torchrun's c10d
 * rendezvous), RUNJOB_JOB, RUNJOB_RUN_ID, RUNJOB_NODE; torchrun's defaults PYTHONUNBUFFERED=1 (print
 * reaches the logs as it happens), NCCL_ASYNC_ERROR_HANDLING=1 and TORCH_NCCL_ASYNC_ERROR_HANDLING=1
 * (the names before and after torch 2.2), which the job may set otherwise; OMP_NUM_THREADS=1 when the
 * node runs several workers and the job does not set it (as torchrun does), GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME when the inventory knows the node's
 * interface towards MASTER_ADDR and the job does not set them; then the job's env, then the node's
 * env on top; then what activating the node's environment changed (found by preflight, with the
 * job's and node's env in force: a venv's PATH, a module's LD_LIBRARY_PATH). A Python's name as
 * the program becomes the environment's {@code python: PATH}.
 */
public final class Planner {

    /** ROLE_NAME: torchrun's default role, the only one runjob has. */
    static final String ROLE = "default";

    /** Shown for MASTER_PORT in a plan whose port is chosen at launch. */
    public static final String PORT_CHOSEN_AT_LAUNCH = "<auto: chosen at launch>";

    /** Shown for MASTER_ADDR in a plan whose master's address is known only at launch (a Slurm node's NodeAddr). */
    public static final String MASTER_ADDR_AT_LAUNCH = "<the master's address, found at launch>";

    /** Set to the interface preflight found, unless the job sets them: gloo and NCCL then bind the right one. */
    static final List<String> SOCKET_INTERFACE_VARIABLES = List.of("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME");

    private Planner() {
    }

    /**
     * {@code plan} with {@code variables} added to each worker's environment (a backend's own, from
     * {@link org.runjob.node.Backend#workerVariables}); the job's {@code env} keeps the last word.
     */
    public static LaunchPlan withVariables(LaunchPlan plan, WorkerVariables variables) {
        List<Integer> perNode = plan.nodes().stream().map(n -> n.workers().size()).toList();
        List<NodePlan> nodes = new ArrayList<>();
        for (NodePlan n : plan.nodes()) {
            Map<String, String> nodeEnv = plan.spec().nodes().stream().filter(s -> s.name().equals(n.name())).findFirst().map(NodeSpec::env)
                    .orElse(Map.of());
            List<WorkerLaunch> workers = new ArrayList<>();
            for (WorkerLaunch w : n.workers()) {
                Map<String, String> added = variables.of(w.env(), perNode);
                if (added.isEmpty()) {
                    workers.add(w);
                    continue;
                }
                Map<String, String> env = new LinkedHashMap<>(w.env());
                added.forEach((k, v) -> {
                    if (!plan.spec().env().containsKey(k) && !nodeEnv.containsKey(k)) {
                        env.put(k, v);
                    }
                });
                workers.add(new WorkerLaunch(w.rank(), w.localRank(), w.node(), w.nodeRank(), w.argv(), env));
            }
            nodes.add(new NodePlan(n.name(), n.nodeRank(), n.address(), n.visibleDevices(), n.workdir(), n.files(), workers, n.environment(),
                    n.activated(), n.unset()));
        }
        return new LaunchPlan(plan.job(), plan.runId(), plan.worldSize(), plan.masterNode(), plan.masterAddr(), plan.masterPort(), nodes,
                plan.spec());
    }

    /**
     * @param masterPort the port chosen at launch for {@code port: auto}; empty in a dry run
     */
    public static LaunchPlan plan(JobSpec spec, Inventory inventory, String runId, OptionalInt masterPort)
            throws PlanningException {
        NodeSpec master = spec.masterNode();
        String masterAddr = spec.rendezvous().addr()
                .or(inventory::masterAddr)
                .orElse(master.address().reachableAs().orElse(master.local() ? "127.0.0.1" : MASTER_ADDR_AT_LAUNCH));
        OptionalInt port = spec.rendezvous().port() instanceof JobSpec.MasterPort.Fixed f
                ? OptionalInt.of(f.port()) : masterPort;
        String portText = port.isPresent() ? Integer.toString(port.getAsInt()) : PORT_CHOSEN_AT_LAUNCH;

        List<List<Integer>> devices = new ArrayList<>();
        List<Integer> counts = new ArrayList<>();
        for (NodeSpec node : spec.nodes()) {
            List<Integer> gpus = gpusOf(node, inventory);
            devices.add(gpus);
            if (node.workers().isPresent()) {
                counts.add(node.workers().getAsInt());
            } else if (gpus != null && !gpus.isEmpty()) {
                counts.add(gpus.size());
            } else if (gpus == null && node.gpus() instanceof NodeSpec.GpuRequest.Listed l) {
                counts.add(l.indices().size());
            } else if (gpus == null && node.gpus() instanceof NodeSpec.GpuRequest.Count c) {
                counts.add(c.count());
            } else if (gpus == null) {
                throw new PlanningException("node '" + node.name() + "' uses gpus: all without workers: its worker count"
                        + " is known only when its GPUs are found at launch; set workers: N to plan it ahead");
            } else {
                throw new PlanningException("node '" + node.name() + "' has no GPUs and no workers");
            }
        }
        int worldSize = counts.stream().mapToInt(Integer::intValue).sum();

        List<NodePlan> nodes = new ArrayList<>();
        int rank = 0;
        for (int nodeRank = 0; nodeRank < spec.nodes().size(); nodeRank++) {
            NodeSpec node = spec.nodes().get(nodeRank);
            int local = counts.get(nodeRank);
            String visible = devices.get(nodeRank) == null ? atLaunch(node, inventory)
                    : devices.get(nodeRank).stream().map(String::valueOf).collect(Collectors.joining(","));
            if (spec.gpuBind() == JobSpec.GpuBind.WORKER && visible.matches("\\d+(,\\d+)*") && visible.split(",").length % local != 0) {
                throw new PlanningException("node '" + node.name() + "' has " + visible.split(",").length + " GPUs (" + visible + ") for "
                        + local + " workers: gpu_bind: worker gives each worker an equal share; give it a multiple of " + local
                        + " GPUs, or as many workers as divide them");
            }
            List<WorkerLaunch> workers = new ArrayList<>();
            for (int localRank = 0; localRank < local; localRank++, rank++) {
                Map<String, String> env = new LinkedHashMap<>();
                env.put("RANK", Integer.toString(rank));
                env.put("LOCAL_RANK", Integer.toString(localRank));
                env.put("WORLD_SIZE", Integer.toString(worldSize));
                env.put("LOCAL_WORLD_SIZE", Integer.toString(local));
                env.put("NODE_RANK", Integer.toString(nodeRank));
                env.put("GROUP_RANK", Integer.toString(nodeRank));
                env.put("GROUP_WORLD_SIZE", Integer.toString(spec.nodes().size()));
                env.put("ROLE_RANK", Integer.toString(rank));
                env.put("ROLE_WORLD_SIZE", Integer.toString(worldSize));
                env.put("MASTER_ADDR", masterAddr);
                env.put("MASTER_PORT", portText);
                env.put("CUDA_VISIBLE_DEVICES", spec.gpuBind() == JobSpec.GpuBind.WORKER ? share(visible, localRank, local) : visible);
                env.put("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
                env.put("TORCHELASTIC_RUN_ID", runId);
                env.put("ROLE_NAME", ROLE);
                env.put("TORCHELASTIC_USE_AGENT_STORE", "False");
                env.put("RUNJOB_JOB", spec.name());
                env.put("RUNJOB_RUN_ID", runId);
                env.put("RUNJOB_NODE", node.name());
                // torchrun's defaults, which the job's env may change
                env.put("PYTHONUNBUFFERED", "1");
                env.put("NCCL_ASYNC_ERROR_HANDLING", "1");
                env.put("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1");
                if (local > 1 && !spec.env().containsKey("OMP_NUM_THREADS") && !node.env().containsKey("OMP_NUM_THREADS")) {
                    env.put("OMP_NUM_THREADS", "1");
                }
                Optional<String> iface = inventory.socketInterface(node.name());
                for (String name : SOCKET_INTERFACE_VARIABLES) {
                    if (iface.isPresent() && !spec.env().containsKey(name) && !node.env().containsKey(name)) {
                        env.put(name, iface.get());
                    }
                }
                env.putAll(spec.env());
                env.putAll(node.env());
                Inventory.Activated activated = inventory.environment(node.name());
                activated.unset().forEach(env::remove);
                env.putAll(activated.set());
                List<String> argv = argv(spec.entrypoint(), localRank);
                argv.set(0, node.environment().programFor(argv.get(0)));
                workers.add(new WorkerLaunch(rank, localRank, node.name(), nodeRank, argv, env));
            }
            nodes.add(new NodePlan(node.name(), nodeRank, node.address(),
                    visible, spec.runDirOf(node, Optional.of(runId)), spec.files(), workers, node.environment(),
                    List.copyOf(inventory.environment(node.name()).set().keySet()), inventory.environment(node.name()).unset()));
        }
        return new LaunchPlan(spec.name(), runId, worldSize, master.name(), masterAddr, port, nodes, spec);
    }

    /**
     * Local rank {@code localRank}'s share of its node's GPUs {@code visible} among {@code local}
     * workers (the count divides them, checked before): the next {@code n / local} in order. A value
     * known only at launch is shown as that worker's share of it; no GPUs stay none.
     */
    static String share(String visible, int localRank, int local) {
        if (visible.isEmpty()) {
            return visible;
        }
        if (!visible.matches("\\d+(,\\d+)*")) {
            return visible.endsWith(">") ? visible.substring(0, visible.length() - 1) + ", local rank " + localRank + "'s share>" : visible;
        }
        List<String> all = List.of(visible.split(","));
        int each = all.size() / local;
        return String.join(",", all.subList(localRank * each, (localRank + 1) * each));
    }

    /** What a dry run shows for GPUs known only at launch. */
    private static String atLaunch(NodeSpec node, Inventory inventory) {
        if (inventory.gpusGivenByScheduler()) {
            return NodePlan.GIVEN_BY_SCHEDULER;
        }
        return node.gpus() instanceof NodeSpec.GpuRequest.Count c ? NodePlan.picked(c.count()) : NodePlan.ALL_FOUND_AT_LAUNCH;
    }

    /**
     * The world size when the job alone gives it, before any node is asked: every node with
     * {@code workers}, listed GPUs or a GPU count; empty when a node's count is found at launch.
     */
    public static OptionalInt worldSizeAhead(JobSpec spec) {
        int sum = 0;
        for (NodeSpec node : spec.nodes()) {
            OptionalInt workers = workersAhead(node);
            if (workers.isEmpty()) {
                return OptionalInt.empty();
            }
            sum += workers.getAsInt();
        }
        return OptionalInt.of(sum);
    }

    /** How many workers {@code node} runs when the job alone says ({@code workers}, listed GPUs or a GPU count); empty when found at launch. */
    public static OptionalInt workersAhead(NodeSpec node) {
        if (node.workers().isPresent()) {
            return node.workers();
        } else if (node.gpus() instanceof NodeSpec.GpuRequest.Listed l && !l.indices().isEmpty()) {
            return OptionalInt.of(l.indices().size());
        } else if (node.gpus() instanceof NodeSpec.GpuRequest.Count c) {
            return OptionalInt.of(c.count());
        }
        return OptionalInt.empty();
    }

    private static List<Integer> gpusOf(NodeSpec node, Inventory inventory) {
        if (inventory.gpusGivenByScheduler()) {
            // the scheduler chooses a node's GPUs: a list is a count; the indices are those its step was given
            Optional<List<Integer>> given = inventory.gpus(node.name());
            boolean none = node.gpus() instanceof NodeSpec.GpuRequest.Listed l && l.indices().isEmpty();
            return none ? List.of() : given.orElse(null);
        }
        if (node.gpus() instanceof NodeSpec.GpuRequest.Listed listed) {
            return listed.indices();
        }
        return inventory.gpus(node.name()).orElse(null);
    }

    static List<String> argv(EntrypointSpec entrypoint, int localRank) {
        List<String> argv = new ArrayList<>();
        if (entrypoint instanceof EntrypointSpec.Command c) {
            argv.addAll(c.argv());
        } else if (entrypoint instanceof EntrypointSpec.Jar j) {
            argv.add("java");
            argv.addAll(j.jvmArgs());
            argv.add("-cp");
            argv.add(j.jarInWorkdir());
            argv.add(j.main());
            argv.addAll(j.args());
        }
        if (entrypoint.localRankArg()) {
            argv.add("--local_rank=" + localRank);
        }
        return argv;
    }
}
