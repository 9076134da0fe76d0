package org.runjob.launch;

import org.runjob.spec.NodeSpec;

/**
 * Where a run puts a node it must avoid: lost and not back for the next attempt (a spare stood
 * in, or the run went on or ended without it), or failed its health check. The run's later
 * attempts avoid it, and so do this user's next runs, until its quarantine ends.
 */
public interface Quarantine {

    /**
     * Quarantines {@code node} for {@code reason}; returns whether it did: a node that is never
     * quarantined (this machine), or a job that quarantines nothing, is left alone.
     */
    boolean add(NodeSpec node, String reason);

    /** Quarantines nothing. */
    Quarantine NONE = (node, reason) -> false;
}
