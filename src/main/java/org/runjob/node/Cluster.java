package org.runjob.node;

import org.runjob.spec.NodeSpec;

/**
 * The remote nodes of one job, reached the way its backend does it (SSH sessions, one Slurm
 * allocation). Local nodes are not a cluster's: runjob starts them as child processes.
 * Closing the cluster ends what it holds (sessions, the allocation) and every program started.
 */
public interface Cluster extends AutoCloseable {

    /** @throws IllegalArgumentException for a node this backend does not reach (a local node) */
    NodeAccess node(NodeSpec node);

    @Override
    void close();
}
