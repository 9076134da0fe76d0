package org.runjob.slurm;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;

/**
 * The Slurm commands a run uses, built from the job alone (pure: the dry run prints them).
 *
 * <ul>
 *   <li>One allocation, {@code salloc ... sh -c HOLD} ({@link #HOLD}: it ends with the run's exit
 *       code, so Slurm's record tells the truth), of exactly the job's nodes, one task per
 *       worker. Nodes with the same GPU count make one component: equal worker counts ask for
 *       {@code --ntasks-per-node}, unequal ones for {@code --ntasks} laid out by a hostfile
 *       ({@code SLURM_HOSTFILE} with {@code --distribution=arbitrary}, grouped by node), so each
 *       node gets one CPU per worker. Nodes with different GPU counts need a heterogeneous job (a
 *       component per count): Slurm starts those only from its backfill scheduler, so such an
 *       allocation waits up to the cluster's {@code bf_interval} (30 s by default) even when idle.</li>
 *   <li>One step per node, {@code srun --jobid=J --job-name=runjob-agent [--het-group=K] --nodelist=NODE --ntasks=1 --whole}:
 *       runjob's agent with all the node's share of the allocation (CPUs, GPUs), stdin and stdout
 *       piped unbuffered (the agent's frames are binary), Slurm's CPU binding off (the agent's
 *       workers share the step).</li>
 * </ul>
 * Which GPUs a node gets is Slurm's choice: a job's GPU list is taken as a count. Nodes given as
 * a count ({@link JobSpec#nodesUnnamed}) are asked for without {@code --nodelist}: Slurm picks them.
 */
public final class SlurmCommands {

    /** Every agent step's name (squeue --steps, sacct): not srun's default, the command's name. */
    public static final String STEP_NAME = "runjob-agent";

    /** Shown for the job id in a dry run. */
    public static final String JOB_ID_AT_LAUNCH = "JOBID";

    /** What one node asks of the allocation. {@code gpus} is -1 for {@code gpus: all} before Slurm said how many. */
    public record Shape(int workers, int gpus) {
    }

    private final JobSpec spec;
    private final SlurmSettings slurm;
    private final Map<String, Shape> shapes;
    private final List<List<String>> components = new ArrayList<>();

    /** @param shapes every node's shape, in node order */
    public SlurmCommands(JobSpec spec, Map<String, Shape> shapes) {
        this.spec = spec;
        this.slurm = spec.settings(SlurmSettings.class);
        this.shapes = new LinkedHashMap<>(shapes);
        Map<Integer, List<String>> byGpus = new LinkedHashMap<>();
        for (NodeSpec node : spec.nodes()) {
            Shape shape = Objects.requireNonNull(shapes.get(node.name()), node.name());
            byGpus.computeIfAbsent(shape.gpus(), g -> new ArrayList<>()).add(node.name());
        }
        if (byGpus.size() == 1) {
            components.add(spec.nodes().stream().map(NodeSpec::name).toList());
        } else {
            // a heterogeneous job: a component per node shape
            Map<Shape, List<String>> byShape = new LinkedHashMap<>();
            for (NodeSpec node : spec.nodes()) {
                byShape.computeIfAbsent(shapes.get(node.name()), x -> new ArrayList<>()).add(node.name());
            }
            components.addAll(byShape.values());
        }
    }

    /**
     * The hostfile the allocation needs ({@code SLURM_HOSTFILE}): one line per worker, grouped by
     * node in node order; empty when every component's nodes have equal worker counts.
     */
    public Optional<List<String>> hostfile() {
        if (components.size() != 1 || uniform(components.get(0))) {
            return Optional.empty();
        }
        List<String> lines = new ArrayList<>();
        for (String node : components.get(0)) {
            for (int i = 0; i < shapes.get(node).workers(); i++) {
                lines.add(node);
            }
        }
        return Optional.of(lines);
    }

    private boolean uniform(List<String> nodes) {
        return nodes.stream().map(n -> shapes.get(n).workers()).distinct().count() == 1;
    }

    /** Each node's shape from the job: its workers (else one per GPU) and its GPU count; -1 GPUs for {@code all}. */
    public static Map<String, Shape> shapesOf(JobSpec spec, Map<String, Integer> gpusFound) {
        Map<String, Shape> shapes = new LinkedHashMap<>();
        for (NodeSpec node : spec.nodes()) {
            int gpus = node.gpus() instanceof NodeSpec.GpuRequest.Listed l ? l.indices().size()
                    : node.gpus() instanceof NodeSpec.GpuRequest.Count c ? c.count() : gpusFound.getOrDefault(node.name(), -1);
            int workers = node.workers().isPresent() ? node.workers().getAsInt() : Math.max(gpus, 1);
            shapes.put(node.name(), new Shape(workers, gpus));
        }
        return shapes;
    }

    /**
     * The command the allocation runs on this machine while it lasts ({@code salloc} ends the job
     * when it exits): it reads the run's exit code from runjob, one line, and exits with it, so
     * Slurm records COMPLETED or FAILED; when runjob dies its stdin ends and it exits 1.
     */
    public static final List<String> HOLD = List.of("sh", "-c", "read -r code || code=1; exit \"$code\"");

    /** salloc's option for an allocation without a command (ended by scancel). */
    public static final String NO_SHELL = "--no-shell";

    /**
     * {@code salloc ... sh -c HOLD}: the allocation of every node, one component per shape, held by
     * {@link #HOLD}. A hostfile layout is {@code salloc --no-shell} instead: salloc refuses to run a
     * command in an arbitrary distribution ("Asked for 3 tasks have 2 in the nodelist", Slurm
     * 22.05), so that allocation ends by scancel and its record says CANCELLED.
     */
    public List<String> salloc(String jobName) {
        boolean held = hostfile().isEmpty();
        List<String> argv = new ArrayList<>(List.of("salloc"));
        if (!held) {
            argv.add(NO_SHELL);
        }
        argv.add("--job-name=" + jobName);
        for (int k = 0; k < components.size(); k++) {
            if (k > 0) {
                argv.add(":");
            }
            argv.addAll(component(components.get(k)));
        }
        if (held) {
            argv.addAll(HOLD);
        }
        return argv;
    }

    /**
     * {@code sbatch --parsable ... SCRIPT COORDINATOR...}: the job's allocation as one sbatch job
     * whose batch step runs {@code coordinator} (through {@code script}, a constant {@code exec "$@"}),
     * named by {@code comment} (the run it is), its output appended to {@code folder/slurm-JOBID.out}. The components are salloc's: nodes of
     * several GPU counts make a heterogeneous job ({@code :} between components, the batch step on
     * the first), unequal worker counts of one GPU count ask for {@code --distribution=arbitrary},
     * laid out by {@link #hostfile} (which sbatch reads from {@code SLURM_HOSTFILE}). Nodes given as
     * a count are asked for with {@code --exclude} of {@code exclude} (quarantined nodes), when any.
     *
     * @throws IllegalArgumentException for {@code gpus: all} not counted yet (nodes given as a count): Slurm needs the count first
     */
    public List<String> sbatch(String jobName, String comment, Path folder, Path script, List<String> coordinator, List<String> exclude) {
        return sbatch(jobName, List.of("--comment=" + comment, "--output=" + folder.resolve("slurm-%j.out")), script, coordinator, exclude);
    }

    /**
     * As {@link #sbatch(String, String, Path, Path, List, List)}, one job array of {@code size} tasks, at
     * most {@code maxParallel} running at once ({@code --array=0-N%K}), each task's output appended
     * to {@code folder/slurm-ARRAYID_TASK.out}.
     *
     * @throws IllegalArgumentException for {@code gpus: all}, and for a heterogeneous job (Slurm runs no arrays of those)
     */
    public List<String> sbatchArray(String jobName, String comment, Path folder, Path script, List<String> coordinator, List<String> exclude,
                                    int size, Optional<Integer> maxParallel) {
        if (heterogeneous()) {
            throw new IllegalArgumentException("Slurm runs no job array of a heterogeneous job");
        }
        List<String> options = List.of("--comment=" + comment, "--array=0-" + (size - 1) + maxParallel.map(k -> "%" + k).orElse(""),
                "--output=" + folder.resolve("slurm-%A_%a.out"));
        return sbatch(jobName, options, script, coordinator, exclude);
    }

    /** True when the job's nodes differ in GPU count: one allocation component per shape (a heterogeneous job). */
    public boolean heterogeneous() {
        return components.size() > 1;
    }

    private List<String> sbatch(String jobName, List<String> own, Path script, List<String> coordinator, List<String> exclude) {
        if (shapes.values().stream().anyMatch(s -> s.gpus() < 0)) {
            throw new IllegalArgumentException("submit asks Slurm for a number of GPUs per node, and gpus: all of nodes given as a"
                    + " count is known only once Slurm has picked them: give the count, e.g. gpus: {count: 8}");
        }
        List<String> argv = new ArrayList<>(List.of("sbatch", "--parsable", "--job-name=" + jobName));
        argv.addAll(own);
        argv.add("--open-mode=append");
        if (slurm.requeueOnTimeLimit()) {
            // the run requeues its own job at the time limit: a site whose jobs are not requeueable by default refuses that without it
            argv.add("--requeue");
        }
        // the batch step is runjob itself (exec): Slurm's warning before the time limit stops the run gracefully
        argv.add("--signal=B:USR1@" + slurm.stopBeforeLimitSeconds());
        for (int k = 0; k < components.size(); k++) {
            if (k > 0) {
                argv.add(":");
            }
            argv.addAll(component(components.get(k)));
            if (spec.nodesUnnamed() && !exclude.isEmpty()) {
                argv.add("--exclude=" + String.join(",", exclude));
            }
        }
        argv.add(script.toString());
        argv.addAll(coordinator);
        return argv;
    }

    /** One component's options, as salloc and sbatch take them: where, how many nodes and tasks, GPUs, CPUs, the job's own. */
    private List<String> component(List<String> nodes) {
        List<String> argv = new ArrayList<>();
        Shape shape = shapes.get(nodes.get(0));
        slurm.partition().ifPresent(p -> argv.add("--partition=" + p));
        slurm.account().ifPresent(a -> argv.add("--account=" + a));
        slurm.qos().ifPresent(q -> argv.add("--qos=" + q));
        slurm.time().ifPresent(t -> argv.add("--time=" + t));
        if (!spec.nodesUnnamed()) {
            argv.add("--nodelist=" + String.join(",", nodes));
        }
        argv.add("--nodes=" + nodes.size());
        if (uniform(nodes)) {
            argv.add("--ntasks-per-node=" + shape.workers());
        } else {
            argv.add("--ntasks=" + nodes.stream().mapToInt(n -> shapes.get(n).workers()).sum());
            argv.add("--distribution=arbitrary");
        }
        if (shape.gpus() != 0) {
            argv.add("--gpus-per-node=" + (shape.gpus() < 0 ? "<all of the node's>" : Integer.toString(shape.gpus())));
        }
        slurm.cpusPerWorker().ifPresent(c -> argv.add("--cpus-per-task=" + c));
        argv.addAll(slurm.allocArgs());
        return argv;
    }

    /** Per-node counts in Slurm's form, runs of equal counts folded: {@code [2, 2, 2, 1]} is {@code 2(x3),1}. */
    static String perNodeCounts(List<Integer> counts) {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < counts.size(); ) {
            int j = i;
            while (j < counts.size() && counts.get(j).equals(counts.get(i))) {
                j++;
            }
            parts.add(counts.get(i) + (j - i > 1 ? "(x" + (j - i) + ")" : ""));
            i = j;
        }
        return String.join(",", parts);
    }

    /** The node's component in a heterogeneous allocation; empty when there is one component. */
    public OptionalInt hetGroup(String node) {
        if (components.size() < 2) {
            return OptionalInt.empty();
        }
        for (int k = 0; k < components.size(); k++) {
            if (components.get(k).contains(node)) {
                return OptionalInt.of(k);
            }
        }
        throw new IllegalArgumentException("not a node of the job: " + node);
    }

    /** {@code srun ...} of the node's step in allocation {@code jobId} (runjob's own), running {@code argv}. */
    public List<String> step(String jobId, String node, List<String> argv) {
        return step(jobId, node, argv, false);
    }

    /**
     * The same; in a {@code borrowed} allocation (the user's: one component, whatever the job's
     * shapes) without {@code --het-group}.
     */
    public List<String> step(String jobId, String node, List<String> argv, boolean borrowed) {
        return step(jobId, node, argv, borrowed ? OptionalInt.empty() : hetGroup(node));
    }

    /** The same, in component {@code group} of a heterogeneous allocation ({@code --het-group}), or in its only one. */
    public List<String> step(String jobId, String node, List<String> argv, OptionalInt group) {
        return step(jobId, node, argv, group, OptionalInt.empty());
    }

    /**
     * The step of {@code node} in an allocation runjob did not shape (the user's, or a submitted
     * run's batch job): {@code --whole} gives the step every GPU the allocation holds on the node,
     * so a node that asks for a number of GPUs also gets {@code --gres=gpu:N}, which limits the step
     * to N of them (srun refuses the step when the node holds fewer); {@code gpus: all} and a node
     * without GPUs take what the allocation holds.
     */
    public List<String> borrowedStep(String jobId, String node, List<String> argv, OptionalInt group) {
        return step(jobId, node, argv, group, askedGpus(node));
    }

    /** The GPUs {@code node} asks for by number (a list or a count); empty for {@code all}, none, or a node the job does not have. */
    OptionalInt askedGpus(String node) {
        for (NodeSpec n : spec.nodes()) {
            if (!n.name().equals(node)) {
                continue;
            }
            if (n.gpus() instanceof NodeSpec.GpuRequest.Listed l && !l.indices().isEmpty()) {
                return OptionalInt.of(l.indices().size());
            }
            if (n.gpus() instanceof NodeSpec.GpuRequest.Count c && c.count() > 0) {
                return OptionalInt.of(c.count());
            }
        }
        return OptionalInt.empty();
    }

    private List<String> step(String jobId, String node, List<String> argv, OptionalInt group, OptionalInt gpus) {
        List<String> cmd = new ArrayList<>(List.of("srun", "--jobid=" + jobId, "--job-name=" + STEP_NAME));
        group.ifPresent(k -> cmd.add("--het-group=" + k));
        cmd.addAll(List.of("--nodelist=" + node, "--nodes=1", "--ntasks=1", "--whole", "--unbuffered", "--quiet",
                "--kill-on-bad-exit=1", "--cpu-bind=none"));
        gpus.ifPresent(g -> cmd.add("--gres=gpu:" + g));
        cmd.addAll(slurm.srunArgs());
        cmd.addAll(argv);
        return cmd;
    }

    /** What of the job Slurm runs differently from SSH, said before a run: GPU lists become counts, SSH settings are unused. */
    public static List<String> notes(JobSpec spec) {
        List<String> notes = new ArrayList<>();
        if (spec.nodesUnnamed()) {
            notes.add("the " + spec.nodes().size() + " nodes are given as a count: Slurm picks them, and runjob names them from the"
                    + " allocation at start (" + JobSpec.countedNodeName(0) + ", ... stand for them until then)");
        }
        for (NodeSpec node : spec.nodes()) {
            if (node.gpus() instanceof NodeSpec.GpuRequest.Listed l && !l.indices().isEmpty()) {
                notes.add("node " + node.name() + ": Slurm chooses the GPUs, so gpus " + l.indices() + " asks for " + l.indices().size()
                        + "; the ones given are recorded in the run folder");
            }
        }
        JobSpec.SshSpec ssh = spec.ssh();
        if (ssh.identity().isPresent() || ssh.passwordEnv().isPresent() || !ssh.knownHosts().equals(JobSpec.SshSpec.DEFAULT_KNOWN_HOSTS)
                || ssh.hostKeyPolicy() != JobSpec.HostKeyPolicy.STRICT) {
            notes.add("backend slurm: the ssh settings are not used");
        }
        return notes;
    }

}
