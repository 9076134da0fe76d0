package org.runjob.node;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

import org.runjob.spec.NodeSpec;

/**
 * The nodes of one job, reached the way its {@link Backend} does it: SSH sessions, one Slurm
 * allocation, child processes of runjob for local nodes ({@link LocalCluster}), or a
 * {@link MixedCluster} of those. Closing the cluster ends what it holds (sessions, the allocation)
 * and every program started.
 */
public interface Cluster extends AutoCloseable {

    /** @throws IllegalArgumentException for a node this cluster does not reach */
    NodeAccess node(NodeSpec node);

    /** What the backend holds for this run beyond its agents, once it holds it (a Slurm job id). */
    default Optional<RunHandle> handle() {
        return Optional.empty();
    }

    /**
     * The run's exit code, before {@link #close}: a backend whose scheduler records how a job ended
     * (Slurm's COMPLETED or FAILED) records it from this. Without it, a close is a failure.
     */
    default void ended(int exitCode) {
    }

    /**
     * Why the nodes are gone for good, when the backend can tell (the Slurm job was cancelled,
     * reached its time limit, was preempted, lost a node): a restart cannot use them. Asked after
     * an attempt failed; empty while they can still be used.
     */
    default Optional<String> gone() {
        return Optional.empty();
    }

    /**
     * Why the scheduler is ending this run, when runjob runs as its batch step and was sent SIGTERM
     * (a requeue, a node failure, a cancel), as far as the scheduler says; asked once, on the first
     * such interrupt, while the step still runs. Empty for a backend without a scheduler, or outside
     * a batch step.
     */
    default Optional<SchedulerStop> stoppedBy() {
        return Optional.empty();
    }

    /**
     * Keeps the run's next start off {@code machines} ({@link org.runjob.spec.NodeAddress#machine}
     * names: the quarantined ones), when the scheduler requeued the batch job runjob runs in and
     * picks its nodes again; the problem, when it could not. Nothing to do by default.
     */
    default Optional<String> keepOff(Set<String> machines) {
        return Optional.empty();
    }

    /**
     * After a run that the scheduler's time-limit warning stopped, when the job file asks for it:
     * requeues the batch job runjob runs in, so the run goes on as its next attempt when the
     * scheduler starts it again. What was done (or why it could not be), for the console; empty
     * when nothing was asked.
     */
    default Optional<String> requeueAfterTimeLimit() {
        return Optional.empty();
    }

    /**
     * After a run of the scheduler's batch job that a stop ended (runjob stop, a signal with no
     * reason of the scheduler's own): ends the batch job through the scheduler, so its record says
     * it was cancelled, not that it failed. What was done (or why it could not be), for the
     * console; empty when there is nothing to end.
     */
    default Optional<String> cancelAfterStop() {
        return Optional.empty();
    }

    /**
     * Asks to be told, with the reason, when the nodes will soon be taken away (a scheduler's time
     * limit ahead), so the run can stop gracefully first, as for Ctrl-C. A backend whose nodes stay
     * has nothing to tell.
     */
    default void onEnding(Consumer<String> stop) {
    }

    /**
     * The variables of its environment each node's agent reports in HELLO, beside its
     * CUDA_VISIBLE_DEVICES (a scheduler's GPUs: {@link SchedulerGpus#variables}); none by default.
     */
    default List<String> agentVariables() {
        return List.of();
    }

    @Override
    void close();
}
