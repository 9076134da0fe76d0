package org.runjob.plan;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One worker process: its ranks, the exact argv it is started with (no shell), and the variables
 * runjob puts in its environment on top of the node's own.
 */
public record WorkerLaunch(int rank, int localRank, String node, int nodeRank, List<String> argv, Map<String, String> env) {

    public WorkerLaunch {
        Objects.requireNonNull(node, "node");
        argv = List.copyOf(argv);
        env = Collections.unmodifiableMap(new LinkedHashMap<>(env));
        if (rank < 0 || localRank < 0 || nodeRank < 0 || argv.isEmpty()) {
            throw new IllegalArgumentException("bad worker " + rank + "/" + localRank + " on " + node);
        }
    }
}
