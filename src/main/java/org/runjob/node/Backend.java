package org.runjob.node;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.runjob.spec.BackendSpec;
import org.runjob.spec.GpuAuthority;
import org.runjob.spec.JobSpec;
import org.runjob.spec.WorkerVariables;

/**
 * One way of running a job's agents (SSH logins, a Slurm allocation), chosen by the job file's
 * {@code backend:} through the one registry ({@code backends.Backends}). Code outside a backend asks
 * it; it never asks which backend it is. A new backend is one package with one of these and its
 * {@link BackendSpec} (its part of the job file), registered by one line in
 * {@code META-INF/services/org.runjob.node.Backend}.
 *
 * <ol>
 *   <li>{@link #resolve}: the job's nodes named, where the backend picks them.</li>
 *   <li>{@link #notes} before a run: what the job file asks that this backend treats otherwise.</li>
 *   <li>{@link #dryRun}: the commands it would run, for {@code --dry-run} (text and plan JSON).</li>
 *   <li>{@link #open}: the job's {@link Cluster}; nothing is contacted until a node is reached.</li>
 *   <li>{@link #gpus}: who picks each node's GPUs.</li>
 *   <li>{@link #queue}: its batch queue, where it has one ({@code runjob submit}, records, stop).</li>
 *   <li>The run handle ({@link Cluster#handle}) goes into {@code summary.json}.</li>
 * </ol>
 */
public interface Backend {

    /** The job file's {@code backend:} value: "ssh", "slurm" (its {@link #jobFile}'s name). */
    default String name() {
        return jobFile().name();
    }

    /** Its part of the job file: its block, its node addresses, its rules. */
    BackendSpec jobFile();

    /**
     * True when a run's nodes are still there after it ends, so {@code runjob pull} can fetch its
     * outputs later; false for nodes that were held only while the run ran (an allocation).
     */
    default boolean nodesOutlastRun() {
        return true;
    }

    /**
     * The job's nodes, reached the way this backend does.
     *
     * @param progress    gets a line now and then while the backend waits (a queued allocation)
     * @param interrupted true once runjob is asked to stop (Ctrl-C): a waiting start is withdrawn
     */
    Cluster open(JobSpec spec, Map<String, String> env, Consumer<String> progress, BooleanSupplier interrupted);

    /**
     * The job with every node named, before anything else of a run or check uses its nodes: a
     * backend that picks nodes itself (Slurm's nodes given as a count) names them from where runjob
     * runs (the allocation it is in); others return {@code spec}.
     *
     * @throws NodeException saying why the nodes cannot be named here
     */
    default JobSpec resolve(JobSpec spec, Map<String, String> env) throws NodeException {
        return spec;
    }

    /** What this backend treats otherwise than the job file reads (settings it ignores, lists it takes as counts). */
    List<String> notes(JobSpec spec);

    /** The commands a run of {@code spec} would run; empty for a backend that reaches its nodes directly. */
    DryRun dryRun(JobSpec spec);

    /** Who decides which GPUs a node's workers use: the scheduler when {@link #schedulerGpus} says how, else runjob. */
    default GpuAuthority gpus() {
        return schedulerGpus().isPresent() ? GpuAuthority.SCHEDULER_ASSIGNED : GpuAuthority.PROBED_AND_LEASED;
    }

    /** For a backend whose scheduler gives each node its GPUs: how its agents report them; empty: runjob probes and leases. */
    default Optional<SchedulerGpus> schedulerGpus() {
        return Optional.empty();
    }

    /** What this backend adds to each worker's environment from its ranks; nothing by default. */
    default WorkerVariables workerVariables() {
        return WorkerVariables.NONE;
    }

    /**
     * A backend's batch queue, where it has one of its own (Slurm's sbatch): {@code runjob submit}
     * queues the run there, and its records ask it how the job stands. Empty for a backend whose
     * runs are handed to their nodes directly ({@code runjob submit} over SSH).
     */
    default Optional<BatchQueue> queue() {
        return Optional.empty();
    }

    /**
     * What a dry run shows of a backend's own commands.
     *
     * @param summary  one line that says how the nodes are started
     * @param commands the commands, shell-quoted, in the order a run issues them
     */
    record DryRun(String summary, List<String> commands) {
        public DryRun {
            commands = List.copyOf(commands);
        }

        public static DryRun none() {
            return new DryRun("", List.of());
        }

        public boolean isEmpty() {
            return commands.isEmpty();
        }
    }
}
