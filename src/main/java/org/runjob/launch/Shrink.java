package org.runjob.launch;

import java.util.Optional;
import java.util.Set;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.plan.LaunchPlan;
import org.runjob.plan.PlanningException;
import org.runjob.session.NodeStarter;
import org.runjob.spec.JobSpec;

/**
 * Fewer nodes when the job allows it ({@code failure.min_nodes}): a plan without lost nodes that
 * no spare took the place of, when at least that many nodes are left. Ranks stay contiguous in
 * node order and WORLD_SIZE is the new total; when the master is among the lost, the first node
 * left is the master, at its address.
 */
public final class Shrink {

    private static final Logger LOG = LogManager.getLogger(Shrink.class);

    private final NodeStarter starter;
    private final Spares.Replanner replanner;

    public Shrink(NodeStarter starter, Spares.Replanner replanner) {
        this.starter = starter;
        this.replanner = replanner;
    }

    /** {@code plan} without {@code missing}; empty when the job never shrinks, or fewer than min_nodes would be left. */
    public Optional<LaunchPlan> without(LaunchPlan plan, Set<String> missing) {
        int min = plan.spec().failure().minNodes();
        long left = plan.nodes().stream().filter(n -> !missing.contains(n.name())).count();
        if (min == 0 || missing.isEmpty()) {
            return Optional.empty();
        }
        if (left < min) {
            LOG.warn("{} of {} nodes would be left without {}, fewer than failure.min_nodes {}: the restart tries them again", left,
                    plan.nodes().size(), String.join(", ", missing), min);
            return Optional.empty();
        }
        JobSpec spec = plan.spec().without(missing);
        boolean masterLost = missing.contains(plan.masterNode());
        Optional<String> addr = masterLost ? starter.reachedAt(spec.masterNode()) : Optional.of(plan.masterAddr());
        try {
            return Optional.of(replanner.plan(spec, addr));
        } catch (PlanningException e) {
            LOG.warn("cannot plan the run without {}: {}", String.join(", ", missing), e.getMessage());
            return Optional.empty();
        }
    }
}
