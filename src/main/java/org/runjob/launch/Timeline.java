package org.runjob.launch;

import java.util.List;

/**
 * Where the launcher reports a run's recovery as it happens (the run folder's {@code events.jsonl}):
 * each attempt's start (its nodes) and end (its verdict, root cause and lost nodes), each spare
 * that stands in, each wait for a lost node, each attempt that runs on fewer nodes, each failed
 * health check and each node quarantined. Each
 * report is ignored unless an implementation takes it.
 */
public interface Timeline {

    default void attemptStarted(int attempt, List<String> nodes) {
    }

    default void attemptEnded(AttemptResult result) {
    }

    default void standIn(StandIn standIn) {
    }

    /** A restart waited {@code seconds} for lost node {@code node}; {@code answered}: it came back. */
    default void waitedForNode(String node, double seconds, boolean answered) {
    }

    /** Attempt {@code attempt} runs without the lost nodes {@code dropped}, on {@code worldSize} ranks ({@code failure.min_nodes}). */
    default void shrunk(int attempt, List<String> dropped, int worldSize) {
    }

    /** Node {@code node} failed its health check before attempt {@code attempt}. */
    default void healthCheckFailed(int attempt, String node, String why) {
    }

    /** Node {@code node} is quarantined: this run and the next ones avoid it. */
    default void quarantined(String node, String why) {
    }

    Timeline NONE = new Timeline() {
    };
}
