package org.runjob.launch;

/**
 * A spare that took a lost node's place: from attempt {@code attempt} on, spare {@code spare} runs
 * node {@code node}'s node rank and ranks; {@code why} is how the node was lost.
 */
public record StandIn(String spare, String node, int nodeRank, int attempt, String why) {

    /** "spare d stands in for node c (node rank 2) from attempt 1: c was lost (its agent exited)". */
    public String describe() {
        return "spare " + spare + " stands in for node " + node + " (node rank " + nodeRank + ") from attempt " + attempt + ": " + node
                + " was lost (" + why + ")";
    }
}
