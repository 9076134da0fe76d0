package org.runjob.node;

import java.io.OutputStream;
import java.util.List;
import java.util.Optional;

/**
 * One remote node, however it is reached (SSH login, Slurm step): all runjob needs of a node is
 * to start its bootstrap with piped stdin and stdout; the agent it starts does the rest (checks,
 * files, rendezvous probe, workers) over that one stream. Argv lists only: any quoting happens
 * inside an implementation.
 */
public interface NodeAccess {

    /**
     * Reaches the node (an SSH login; the job's Slurm allocation) and says how, for the preflight
     * table: "root@10.0.0.2:22", "slurm job 41 on n1".
     */
    String reach() throws NodeException;

    /**
     * Starts {@code argv} on the node; its stderr goes to {@code stderr}. Must be reached first.
     *
     * @param timeoutMs how long the start itself may take (opening the channel or step)
     */
    NodeProcess start(List<String> argv, OutputStream stderr, int timeoutMs) throws NodeException;

    /** The node's address as other nodes would use it (SSH's resolved HostName, Slurm's NodeAddr), once reached. */
    Optional<String> address();

    /**
     * True when the node's processes are this machine's (a local node): their pids can then be
     * signalled from here as a last resort, should the node's agent die.
     */
    default boolean onThisMachine() {
        return false;
    }

    /**
     * Reaches the node once more on a connection of its own (an SSH login), leaving the one in use
     * alone, so an agent that only answers slowly keeps its channel: empty when the node answers,
     * else why not. This is the evidence a node is lost on. A backend with no such connection to
     * try (a local node; a scheduler's step, whose end the scheduler itself says) answers empty.
     */
    default Optional<String> probe() {
        return Optional.empty();
    }

    /**
     * Forgets how the node was reached, so the next start reaches it afresh: after the node was
     * lost, a connection that looks open (an SSH session across a cut link) may never answer again.
     */
    default void reset() {
    }
}
