package org.runjob.slurm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.runjob.node.Backend;
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
        List<String> held = SlurmCommands.hostnames(list.get(), SlurmEnv.of(env));
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
    public boolean queues() {
        return true;
    }

    /**
     * {@code sbatch --parsable OPTIONS SCRIPT COORDINATOR...}: the allocation as sbatch options, the
     * coordinator in its batch step. A layout that needs a hostfile gets it as {@code folder/hostfile},
     * named to sbatch by {@code env SLURM_HOSTFILE=...}. Nodes given as a count keep off the Slurm
     * nodes among {@code avoid} ({@code --exclude}).
     */
    @Override
    public Optional<List<String>> queue(JobSpec spec, Path folder, Path script, List<String> coordinator, Set<String> avoid,
                                        Map<String, String> env) throws IOException {
        SlurmCommands commands = queued(spec, env);
        List<String> exclude = SlurmAddress.nodesOf(avoid);
        List<String> sbatch = commands.sbatch("runjob-" + spec.name(), comment(spec, folder), folder, script, coordinator, exclude);
        return Optional.of(withHostfile(commands, folder, sbatch));
    }

    /** The job's comment, what squeue -o %k and sacct show of it: "runjob:JOB/RUN_ID", or "runjob:JOB/sweep-ID" of a sweep. */
    static String comment(JobSpec spec, Path folder) {
        return "runjob:" + spec.name() + "/" + folder.getFileName();
    }

    /**
     * {@code sbatch --parsable --array=0-N%K ...}: {@link #queue}'s allocation as one job array;
     * empty for a heterogeneous job (Slurm runs no arrays of those). Each task's output is
     * {@code folder/slurm-ARRAYID_TASK.out}.
     */
    @Override
    public Optional<List<String>> queueArray(JobSpec spec, Path folder, Path script, List<String> coordinator, Set<String> avoid,
                                             int size, Optional<Integer> maxParallel, Map<String, String> env) throws IOException {
        SlurmCommands commands = queued(spec, env);
        if (commands.heterogeneous()) {
            return Optional.empty();
        }
        List<String> sbatch = commands.sbatchArray("runjob-" + spec.name(), comment(spec, folder), folder, script, coordinator,
                SlurmAddress.nodesOf(avoid), size, maxParallel);
        return Optional.of(withHostfile(commands, folder, sbatch));
    }

    /**
     * The commands of a job to be queued: a named node's {@code gpus: all} is the GPU count Slurm
     * has for it ({@code sinfo}'s Gres), as an interactive run finds it; nodes given as a count are
     * not known before the job runs, so their {@code all} is refused by {@link SlurmCommands#sbatch}.
     *
     * @throws IllegalArgumentException naming a node Slurm does not know, or why sinfo could not say
     */
    private static SlurmCommands queued(JobSpec spec, Map<String, String> env) {
        List<String> all = spec.nodes().stream().filter(n -> n.gpus() instanceof NodeSpec.GpuRequest.All).map(NodeSpec::name).toList();
        if (all.isEmpty() || spec.nodesUnnamed()) {
            return new SlurmCommands(spec, SlurmCommands.shapesOf(spec, Map.of()));
        }
        List<String> argv = List.of("sinfo", "--noheader", "--Node", "--nodes=" + String.join(",", all), "--format=" + SlurmNodeInfo.FORMAT);
        String out = SlurmCommands.ask(argv, SlurmEnv.of(env))
                .orElseThrow(() -> new IllegalArgumentException("cannot run sinfo to count the GPUs of node " + all.get(0) + " (gpus: all)"));
        Map<String, SlurmNodeInfo> infos = SlurmNodeInfo.parse(out);
        Map<String, Integer> gpus = new LinkedHashMap<>();
        for (String node : all) {
            SlurmNodeInfo info = infos.get(node);
            if (info == null) {
                throw new IllegalArgumentException("node " + node + " asks for gpus: all, and Slurm has no node named '" + node + "'"
                        + (out.isBlank() ? "" : " (sinfo: " + out.strip().lines().findFirst().orElse("") + ")"));
            }
            gpus.put(node, info.gpus());
        }
        return new SlurmCommands(spec, SlurmCommands.shapesOf(spec, gpus));
    }

    /** {@code sbatch}, after {@code env SLURM_HOSTFILE=folder/hostfile} where the layout needs a hostfile (written there). */
    private static List<String> withHostfile(SlurmCommands commands, Path folder, List<String> sbatch) throws IOException {
        Optional<List<String>> hosts = commands.hostfile();
        if (hosts.isEmpty()) {
            return sbatch;
        }
        Path file = Files.write(folder.resolve("hostfile"), hosts.get());
        List<String> argv = new ArrayList<>(List.of("env", "SLURM_HOSTFILE=" + file));
        argv.addAll(sbatch);
        return argv;
    }

    /**
     * The sbatch command with its {@code --exclude} made anew from {@code avoid}, when its nodes are
     * Slurm's to pick (no {@code --nodelist} among sbatch's options, one component); a command that
     * names its nodes is run as it was. Only sbatch's options (before {@code script}) are read and
     * changed, never the coordinator's arguments.
     */
    @Override
    public List<String> again(List<String> command, Path script, Set<String> avoid) {
        int sbatch = command.indexOf("sbatch");
        int end = command.indexOf(script.toString());
        if (sbatch < 0 || end < sbatch) {
            return command;
        }
        List<String> options = command.subList(sbatch + 1, end);
        if (options.stream().anyMatch(w -> w.startsWith("--nodelist=")) || options.contains(":")) {
            return command;
        }
        List<String> argv = new ArrayList<>(command.subList(0, sbatch + 1));
        argv.addAll(options.stream().filter(w -> !w.startsWith("--exclude=")).toList());
        List<String> exclude = SlurmAddress.nodesOf(avoid);
        if (!exclude.isEmpty()) {
            argv.add("--exclude=" + String.join(",", exclude));
        }
        argv.addAll(command.subList(end, command.size()));
        return argv;
    }

    /** {@code FOLDER/slurm-JOBID.out}, as sbatch's {@code --output} names it. */
    @Override
    public Optional<Path> queuedOutput(Path folder, String jobId) {
        return Optional.of(folder.resolve("slurm-" + jobId + ".out"));
    }

    /** From the job's record ({@link SlurmEvents#queueState}): one line, a requeued job's hold included. */
    @Override
    public Optional<String> queued(String jobId, Map<String, String> env) {
        return SlurmCommands.job(jobId, SlurmEnv.of(env)).flatMap(SlurmEvents::queueState);
    }

    /** {@code scontrol show job}: RUNNING, with more {@code Restarts=} than {@code restartsSeen}. */
    @Override
    public boolean runsAgain(String jobId, int restartsSeen, Map<String, String> env) {
        return SlurmCommands.job(jobId, SlurmEnv.of(env)).map(out -> SlurmEvents.running(out) && SlurmEvents.restarts(out) > restartsSeen)
                .orElse(false);
    }

    @Override
    public Optional<String> unstarted(String jobId, Map<String, String> env) {
        return SlurmCommands.job(jobId, SlurmEnv.of(env)).flatMap(out -> SlurmEvents.unstarted(jobId, out));
    }

    @Override
    public Optional<String> cancel(String jobId, boolean now, Map<String, String> env) {
        boolean pending = queued(jobId, env).map(s -> s.startsWith("queued") || s.startsWith("requeued")).orElse(false);
        List<String> argv = now || pending ? List.of("scancel", jobId) : List.of("scancel", "--batch", "--signal=TERM", jobId);
        String out = SlurmCommands.ask(argv, SlurmEnv.of(env)).orElse("scancel did not answer").trim();
        return out.isEmpty() ? Optional.empty() : Optional.of(out);
    }

    /**
     * {@code scancel ARRAY} with {@code now}; else {@code scancel --state=PENDING ARRAY} (the waiting
     * tasks, a requeue hold's among them), then {@code scancel --batch --signal=TERM --state=RUNNING ARRAY}:
     * a task that starts between the two is signalled by the second.
     */
    @Override
    public Optional<String> cancelArray(String arrayId, boolean now, Map<String, String> env) {
        Map<String, String> slurmEnv = SlurmEnv.of(env);
        if (now) {
            return SlurmCommands.failure(List.of("scancel", arrayId), slurmEnv);
        }
        Optional<String> pending = SlurmCommands.failure(List.of("scancel", "--state=PENDING", arrayId), slurmEnv);
        Optional<String> running = SlurmCommands.failure(List.of("scancel", "--batch", "--signal=TERM", "--state=RUNNING", arrayId), slurmEnv);
        return pending.isPresent() ? pending : running;
    }

    @Override
    public Optional<SchedulerGpus> schedulerGpus() {
        return Optional.of(SlurmGpus.INSTANCE);
    }
}
