package org.runjob.launch;

import java.util.List;

/**
 * Where the launcher reports a run's recovery as it happens (the run folder's {@code events.jsonl}):
 * each attempt's start (its nodes) and end (its verdict, root cause and lost nodes), each spare
 * that stands in, each wait for a lost node, and each attempt that runs on fewer nodes.
 */
public interface Timeline {

    void attemptStarted(int attempt, List<String> nodes);

    void attemptEnded(AttemptResult result);

    void standIn(StandIn standIn);

    /** Attempt {@code attempt} runs without the lost nodes {@code dropped}, on {@code worldSize} ranks ({@code failure.min_nodes}). */
    void shrunk(int attempt, List<String> dropped, int worldSize);

    /** A restart waited {@code seconds} for lost node {@code node}; {@code answered}: it came back. */
    void waitedForNode(String node, double seconds, boolean answered);

    Timeline NONE = new Timeline() {
        @Override
        public void attemptStarted(int attempt, List<String> nodes) {
        }

        @Override
        public void attemptEnded(AttemptResult result) {
        }

        @Override
        public void standIn(StandIn standIn) {
        }

        @Override
        public void waitedForNode(String node, double seconds, boolean answered) {
        }

        @Override
        public void shrunk(int attempt, List<String> dropped, int worldSize) {
        }
    };
}
