package org.runjob.protocol;

import java.util.List;
import java.util.Map;

/** What the agent is told to start for one worker: its rank, argv, the variables to add, and where. */
public record WorkerStart(int rank, List<String> argv, Map<String, String> env, String workdir) {
    public WorkerStart {
        argv = List.copyOf(argv);
        env = Map.copyOf(env);
    }
}
