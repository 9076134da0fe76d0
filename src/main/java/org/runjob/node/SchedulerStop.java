package org.runjob.node;

import java.util.List;
import java.util.Objects;

/**
 * Why the scheduler that runs runjob as its batch step is ending that step ({@link Cluster#stoppedBy}):
 * its own words for it, whether it requeued the job (it runs again as the run's next attempt), and
 * the machines the job lost (a node failure, as {@link org.runjob.spec.NodeAddress#machine} names
 * them), which the next start should avoid.
 *
 * @param why       the scheduler's cause, e.g. "Slurm job 12 lost node h2 (node failure) and requeued it (restart 1)"
 * @param requeued  the job will start again
 * @param lostMachines the machines of the nodes the job lost, in the scheduler's order; empty when none
 */
public record SchedulerStop(String why, boolean requeued, List<String> lostMachines) {

    public SchedulerStop {
        Objects.requireNonNull(why, "why");
        lostMachines = List.copyOf(lostMachines);
    }
}
