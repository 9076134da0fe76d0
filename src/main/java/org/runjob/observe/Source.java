package org.runjob.observe;

import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Something a node's agent watches while its workers run, every {@code observe.interval_s}, and
 * reports as samples: each one JSON object on one line. The agent sends each to the coordinator
 * in a SAMPLE frame named by the source; the coordinator writes it, with the node and attempt, to
 * the run folder's {@code metrics/source-NAME-NODE.jsonl}, and {@code runjob top -o json} shows each
 * node's last one. The node's GPUs ({@code gpus}) are the built-in source; others register with a
 * line in {@code META-INF/services/org.runjob.observe.Source} and run where the job file names
 * them ({@code observe.sources}).
 *
 * <p>A source runs inside the agent, on threads of its own, from the start of the workers until
 * the agent exits: it must not block the caller, throw, or write to stdout.
 */
public interface Source {

    /** Its name: lower-case letters, digits and {@code _}, starting with a letter. */
    String name();

    /**
     * Starts sampling every {@code intervalMillis} for {@code workers} (the node's workers of this
     * attempt), each sample a JSON object without a newline to {@code emit}, until the agent exits.
     */
    void start(long intervalMillis, List<Worker> workers, Consumer<String> emit);

    /** A worker of the node, as a source sees it: its rank and the variables it was started with. */
    record Worker(int rank, Map<String, String> env) {
        public Worker {
            env = Map.copyOf(env);
        }
    }
}
