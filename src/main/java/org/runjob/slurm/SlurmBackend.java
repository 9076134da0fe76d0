package org.runjob.slurm;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.runjob.node.Backend;
import org.runjob.node.BatchQueue;
import org.runjob.node.Cluster;
import org.runjob.node.NodeException;
import org.runjob.node.SchedulerGpus;
import org.runjob.plan.ShellWords;
import org.runjob.spec.BackendSpec;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;
import org.runjob.spec.WorkerVariables;

/**
 * {@code backend: slurm}: the job is one Slurm allocation ({@code salloc}, one component per node
 * shape) and each node's agent one step of it ({@code srun}); Slurm gives each step its GPUs.
 */
public final class SlurmBackend implements Backend {

    private final SlurmJobFile jobFile = new SlurmJobFile();

    @Override
    public BackendSpec jobFile() {
        return jobFile;
    }

    /** The allocation ends with the run. */
    @Override
    public boolean nodesOutlastRun() {
        return false;
    }

    @Override
    public Cluster open(JobSpec spec, Map<String, String> env, Consumer<String> progress, BooleanSupplier interrupted) {
        return new SlurmCluster(spec, env, progress, interrupted);
    }

    /**
     * Nodes given as a count are named from the allocation runjob runs in ({@code SLURM_JOB_NODELIST},
     * expanded by {@code scontrol show hostnames}): the first N, in Slurm's order, the first the master.
     */
    @Override
    public JobSpec resolve(JobSpec spec, Map<String, String> env) throws NodeException {
        if (!spec.nodesUnnamed()) {
            return spec;
        }
        int n = spec.nodes().size();
        Optional<String> job = SlurmEnv.jobId(env);
        Optional<String> list = SlurmEnv.nodeList(env).filter(l -> !l.isBlank());
        if (job.isEmpty() || list.isEmpty()) {
            throw new NodeException("the job's " + n + " node" + (n == 1 ? " is" : "s are") + " given as a count, and Slurm names them"
                    + " when it allocates them: queue the run with `runjob submit`, or run runjob inside an allocation (salloc --nodes=" + n + ")");
        }
        List<String> held = SlurmClient.hostnames(list.get(), SlurmEnv.of(env));
        if (held.size() < n) {
            throw new NodeException("runjob runs inside Slurm job " + job.get() + ", which holds " + held.size() + " node"
                    + (held.size() == 1 ? "" : "s") + " (" + list.get() + "); the job asks for " + n);
        }
        return spec.withNodes(held.subList(0, n), SlurmAddress::new);
    }

    /**
     * Slurm's per-task variables as {@code srun --ntasks=WORLD_SIZE} would give each worker: its
     * SLURM_PROCID is its RANK, SLURM_LOCALID its LOCAL_RANK, SLURM_NODEID its NODE_RANK,
     * SLURM_NTASKS and SLURM_NPROCS the world size, SLURM_NTASKS_PER_NODE its node's worker count
     * (one number, as Lightning compares it with its devices), SLURM_TASKS_PER_NODE every node's
     * count in Slurm's form ({@code 2(x3),1}), SLURM_NNODES the node count. Each node's step is
     * one task, and its workers would otherwise all read rank 0 of 1.
     */
    @Override
    public WorkerVariables workerVariables() {
        return (worker, perNode) -> {
            Map<String, String> out = new LinkedHashMap<>();
            out.put("SLURM_PROCID", worker.get("RANK"));
            out.put("SLURM_LOCALID", worker.get("LOCAL_RANK"));
            out.put("SLURM_NODEID", worker.get("NODE_RANK"));
            out.put("SLURM_NTASKS", worker.get("WORLD_SIZE"));
            out.put("SLURM_NPROCS", worker.get("WORLD_SIZE"));
            String tasks = SlurmCommands.perNodeCounts(perNode);
            out.put("SLURM_NTASKS_PER_NODE", worker.get("LOCAL_WORLD_SIZE"));
            out.put("SLURM_TASKS_PER_NODE", tasks);
            out.put("SLURM_STEP_TASKS_PER_NODE", tasks);
            out.put("SLURM_STEP_NUM_TASKS", worker.get("WORLD_SIZE"));
            out.put("SLURM_NNODES", Integer.toString(perNode.size()));
            out.put("SLURM_STEP_NUM_NODES", Integer.toString(perNode.size()));
            out.values().removeIf(Objects::isNull);
            return out;
        };
    }

    @Override
    public List<String> notes(JobSpec spec) {
        return SlurmCommands.notes(spec);
    }

    /** The allocation, then one step per node that runs runjob's agent. */
    @Override
    public DryRun dryRun(JobSpec spec) {
        SlurmCommands commands = new SlurmCommands(spec, SlurmCommands.shapesOf(spec, Map.of()));
        List<String> lines = new ArrayList<>();
        Optional<List<String>> hostfile = commands.hostfile();
        hostfile.ifPresent(h -> lines.add("SLURM_HOSTFILE: a file of " + h.size() + " lines: " + String.join(" ", h)));
        lines.add((hostfile.isPresent() ? "SLURM_HOSTFILE=FILE " : "") + ShellWords.join(commands.salloc("runjob-" + spec.name())));
        for (NodeSpec node : spec.nodes()) {
            lines.add(ShellWords.join(commands.step(SlurmCommands.JOB_ID_AT_LAUNCH, node.name(), List.of("sh", "-c", "BOOTSTRAP")))
                    .replace("sh -c BOOTSTRAP", "<runjob's agent bootstrap>"));
        }
        return new DryRun("one allocation, then one step per node that runs runjob's agent (it starts the node's workers)", lines);
    }

    @Override
    public Optional<BatchQueue> queue() {
        return Optional.of(SlurmQueue.INSTANCE);
    }

    @Override
    public Optional<SchedulerGpus> schedulerGpus() {
        return Optional.of(SlurmGpus.INSTANCE);
    }
}
