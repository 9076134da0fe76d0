package org.runjob.plan;

import java.util.List;
import java.util.Objects;
import java.util.OptionalInt;

import org.runjob.spec.JobSpec;

/**
 * What will run (the instance of a {@link JobSpec}): every node with its node rank, and every worker
 * with its rank, argv and environment. A dry run prints this object; a real run plans again with
 * what preflight found (the GPUs, the port, the interfaces) and runs that plan, adding each
 * attempt's variables.
 *
 * <p>Invariants: nodes are in node-rank order 0..n-1; ranks are 0..worldSize-1, contiguous in node
 * order.
 *
 * @param masterPort the rendezvous port, or empty when it is chosen at launch ({@code port: auto})
 */
public record LaunchPlan(
        String job,
        String runId,
        int worldSize,
        String masterNode,
        String masterAddr,
        OptionalInt masterPort,
        List<NodePlan> nodes,
        JobSpec spec) {

    public LaunchPlan {
        Objects.requireNonNull(job, "job");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(masterAddr, "masterAddr");
        nodes = List.copyOf(nodes);
        int next = 0;
        for (int i = 0; i < nodes.size(); i++) {
            NodePlan n = nodes.get(i);
            if (n.nodeRank() != i) {
                throw new IllegalArgumentException("node " + n.name() + " has node rank " + n.nodeRank() + ", expected " + i);
            }
            for (WorkerLaunch w : n.workers()) {
                if (w.rank() != next++) {
                    throw new IllegalArgumentException("ranks are not contiguous at node " + n.name());
                }
            }
        }
        if (next != worldSize) {
            throw new IllegalArgumentException("world size " + worldSize + " but " + next + " workers");
        }
    }

    /** Every worker, in rank order. */
    public List<WorkerLaunch> workers() {
        return nodes.stream().flatMap(n -> n.workers().stream()).toList();
    }
}
