package org.runjob.node;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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

    /** True for a backend with a queue of its own: {@code runjob submit} queues the run ({@link #queue}). */
    default boolean queues() {
        return false;
    }

    /**
     * For a backend with a queue of its own (Slurm's sbatch): the command that queues a run of
     * {@code spec} whose coordinator is {@code coordinator} (an argv run inside the allocation),
     * its scheduler output in {@code folder}; it prints the queued job's id. Where the scheduler
     * picks the nodes, it keeps off the machines in {@code avoid} (quarantined ones, as
     * {@link org.runjob.spec.NodeAddress#machine} names them). Empty for a backend whose runs are
     * handed to their nodes directly ({@code runjob submit} over SSH). {@code env} is runjob's
     * environment, for what the command needs to ask the scheduler first.
     *
     * @throws IllegalArgumentException naming what of the job this backend cannot queue
     * @throws IOException when a file the command needs cannot be written into {@code folder}
     */
    default Optional<List<String>> queue(JobSpec spec, Path folder, Path script, List<String> coordinator, Set<String> avoid,
                                         Map<String, String> env) throws IOException {
        return Optional.empty();
    }

    /**
     * For a backend whose queue runs job arrays (Slurm's {@code --array}): the command that queues
     * {@code size} tasks of one allocation of {@code spec} as one job, at most {@code maxParallel}
     * of them at once, each task running {@code coordinator} (which tells its task from the
     * scheduler's environment) with its scheduler output in {@code folder}; it prints the array's
     * job id, and task {@code i} is then {@link #arrayTask}. Empty where this backend, or this
     * job's allocation, has no arrays (a sweep's points are then queued as a job each).
     *
     * @throws IllegalArgumentException naming what of the job this backend cannot queue
     * @throws IOException when a file the command needs cannot be written into {@code folder}
     */
    default Optional<List<String>> queueArray(JobSpec spec, Path folder, Path script, List<String> coordinator, Set<String> avoid,
                                              int size, Optional<Integer> maxParallel, Map<String, String> env) throws IOException {
        return Optional.empty();
    }

    /** The job id of task {@code task} of job array {@code arrayId} ({@link #queueArray}), as the scheduler's commands take it. */
    default String arrayTask(String arrayId, int task) {
        return arrayId + "_" + task;
    }

    /**
     * {@code command} (what {@link #queue} made for a run with batch script {@code script}, kept in
     * its folder) as it is to be run again: where the scheduler picks the nodes, kept off the
     * machines in {@code avoid} as they are now (quarantined since, or no longer). Unchanged by default.
     */
    default List<String> again(List<String> command, Path script, Set<String> avoid) {
        return command;
    }

    /**
     * Stops every task of job array {@code arrayId} ({@link #queueArray}) at once, as {@link #cancel}
     * stops one job: the tasks still waiting are withdrawn, the running ones stop gracefully (or
     * {@code now}). Returns the scheduler's complaint, or empty.
     */
    default Optional<String> cancelArray(String arrayId, boolean now, Map<String, String> env) {
        return Optional.of("backend " + name() + " runs no job arrays");
    }

    /** Where the scheduler writes a queued job's own output (its batch step's stdout and stderr), if runjob names it. */
    default Optional<Path> queuedOutput(Path folder, String jobId) {
        return Optional.empty();
    }

    /**
     * Where a queued job ({@link #queue}) stands in its scheduler, on one line: "queued" (pending,
     * with the scheduler's reason), "requeued" (waiting to start again after a requeue, with until
     * when or why), "running", or empty once it has ended or the scheduler no longer has it.
     */
    default Optional<String> queued(String jobId, Map<String, String> env) {
        return Optional.empty();
    }

    /**
     * True when a queued job ({@link #queue}) runs again after more restarts than
     * {@code restartsSeen} (its scheduler requeued and started it since): the run's next attempt
     * is starting, whatever the last attempt's summary says. False by default.
     */
    default boolean runsAgain(String jobId, int restartsSeen, Map<String, String> env) {
        return false;
    }

    /**
     * Why a queued job ({@link #queue}) that left the scheduler's queue ended before its coordinator
     * started, as the scheduler recorded it; empty when it was withdrawn, or the scheduler cannot say.
     */
    default Optional<String> unstarted(String jobId, Map<String, String> env) {
        return Optional.empty();
    }

    /**
     * Stops a queued job: {@code now}, or gracefully (its coordinator gets SIGTERM and runs the
     * Ctrl-C path); a pending job is withdrawn. Returns the scheduler's complaint, or empty.
     */
    default Optional<String> cancel(String jobId, boolean now, Map<String, String> env) {
        return Optional.of("backend " + name() + " queues no jobs");
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
