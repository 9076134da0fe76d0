package org.runjob.node;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.runjob.spec.JobSpec;

/**
 * A backend's batch queue ({@link Backend#queue}): where {@code runjob submit} queues a run whose
 * coordinator then runs inside the scheduler's allocation, and what the run's records ask of the
 * queued job later. Submit, sweeps, {@code stop} and the records know a queue only through this;
 * each method's {@code env} is runjob's environment, where the scheduler's client finds its
 * cluster.
 */
public interface BatchQueue {

    /**
     * What {@code runjob submit} does with the job's environments checked on the machine it runs on
     * (the login node) before queueing: refuse the run when one fails, only say so, or check nothing.
     */
    enum LoginCheck { REFUSE, WARN, OFF }

    /** How {@code spec}'s environments are checked on the login node before it is queued ({@link LoginCheck}); refused on failure by default. */
    default LoginCheck loginCheck(JobSpec spec) {
        return LoginCheck.REFUSE;
    }

    /** The job file's key that sets {@link #loginCheck}, as messages name it. */
    default String loginCheckKey() {
        return "login_check";
    }

    /**
     * The command that queues a run of {@code spec} whose coordinator is {@code coordinator} (an
     * argv run inside the allocation, through the batch script {@code script}), its scheduler output
     * in {@code folder}; it prints the queued job's id. Where the scheduler picks the nodes, it keeps
     * off the machines in {@code avoid} (quarantined ones, as {@link org.runjob.spec.NodeAddress#machine}
     * names them).
     *
     * @throws IllegalArgumentException naming what of the job this queue cannot take
     * @throws IOException when a file the command needs cannot be written into {@code folder}
     */
    List<String> submit(JobSpec spec, Path folder, Path script, List<String> coordinator, Set<String> avoid, Map<String, String> env)
            throws IOException;

    /**
     * The job id the command of {@link #submit} or {@link #submitArray} printed (its whole output,
     * stdout and stderr, trimmed), when it queued one; empty when it did not.
     */
    Optional<String> jobId(String output);

    /** True when {@code command} only asks the scheduler whether and when it would run the job, and queues nothing. */
    default boolean asksOnly(List<String> command) {
        return false;
    }

    /**
     * Comment lines for the batch script of a run queued with {@code command}, each starting with
     * {@code #}: what the scheduler was asked, in the form its users read in a script (Slurm's
     * {@code #SBATCH} lines). None by default.
     */
    default String scriptHeader(List<String> command) {
        return "";
    }

    /**
     * The command that queues {@code size} tasks of one allocation of {@code spec} as one job array,
     * at most {@code maxParallel} of them at once, each task running {@code coordinator} (which tells
     * its task by {@link #arrayTaskVariable}); it prints the array's id, and task {@code i} is then
     * {@link #arrayTask}. Empty where this queue, or this job's allocation, has no arrays (a sweep's
     * points are then queued as a job each).
     *
     * @throws IllegalArgumentException naming what of the job this queue cannot take
     * @throws IOException when a file the command needs cannot be written into {@code folder}
     */
    default Optional<List<String>> submitArray(JobSpec spec, Path folder, Path script, List<String> coordinator, Set<String> avoid,
                                               int size, Optional<Integer> maxParallel, Map<String, String> env) throws IOException {
        return Optional.empty();
    }

    /**
     * True when {@link #inLane} can hold a job back behind those queued before it in its lane: how
     * a sweep whose points cannot be one job array is still held to {@code --max-parallel K}
     * (point i in lane i mod K). False by default.
     */
    default boolean lanes() {
        return false;
    }

    /**
     * {@code command} (what {@link #submit} made for a run with batch script {@code script}) changed so
     * that its job starts only once no job queued before it in {@code lane}, by the same user, runs
     * any more: the jobs of one lane run one at a time, in the order queued. Empty where this queue
     * has no such hold ({@link #lanes}).
     *
     * @throws IllegalArgumentException naming what of the command this queue cannot add the hold to
     */
    default Optional<List<String>> inLane(List<String> command, Path script, String lane) {
        return Optional.empty();
    }

    /**
     * How often the scheduler has restarted the queued job whose batch step has {@code env} as its
     * environment (requeues), where it says; empty elsewhere.
     */
    default Optional<Integer> restarts(Map<String, String> env) {
        return Optional.empty();
    }

    /** The variable that tells an array task its index, in the task's environment. */
    default String arrayTaskVariable() {
        return "RUNJOB_ARRAY_TASK";
    }

    /** The job id of task {@code task} of job array {@code arrayId}, as the scheduler's commands take it. */
    default String arrayTask(String arrayId, int task) {
        return arrayId + "_" + task;
    }

    /**
     * {@code command} (what {@link #submit} made for a run with batch script {@code script}, kept in
     * its folder) as it is to be run again: where the scheduler picks the nodes, kept off the
     * machines in {@code avoid} as they are now. Unchanged by default.
     */
    default List<String> again(List<String> command, Path script, Set<String> avoid) {
        return command;
    }

    /** Where the scheduler writes a queued job's own output (its batch step's stdout and stderr), if runjob names it. */
    default Optional<Path> output(Path folder, String jobId) {
        return Optional.empty();
    }

    /**
     * Where a queued job stands, on one line: "queued" (pending, with the scheduler's reason),
     * "requeued" (waiting to start again after a requeue, with until when or why), "running", or
     * empty once it has ended or the scheduler no longer has it.
     */
    Optional<String> state(String jobId, Map<String, String> env);

    /**
     * True when a queued job runs again after more restarts than {@code restartsSeen} (its
     * scheduler requeued and started it since): the run's next attempt is starting, whatever the
     * last attempt's summary says. False by default.
     */
    default boolean runsAgain(String jobId, int restartsSeen, Map<String, String> env) {
        return false;
    }

    /**
     * Why a queued job that left the queue ended before its coordinator started, as the scheduler
     * recorded it; empty when it was withdrawn, or the scheduler cannot say.
     */
    default Optional<String> unstarted(String jobId, Map<String, String> env) {
        return Optional.empty();
    }

    /**
     * Stops a queued job: {@code now}, or gracefully (its coordinator gets SIGTERM and runs the
     * Ctrl-C path); a pending job is withdrawn. Returns the scheduler's complaint, or empty.
     */
    Optional<String> cancel(String jobId, boolean now, Map<String, String> env);

    /** Stops every task of job array {@code arrayId} at once, as {@link #cancel} stops one job; the scheduler's complaint, or empty. */
    default Optional<String> cancelArray(String arrayId, boolean now, Map<String, String> env) {
        return Optional.of("this queue runs no job arrays");
    }
}
