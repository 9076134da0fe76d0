package org.runjob.node;

import java.util.Map;
import java.util.Objects;

/**
 * What a backend holds for one run beyond its agents (a Slurm job id), written into
 * {@code summary.json} under the backend's name: {@code "slurm": {"job_id": "41"}}.
 */
public record RunHandle(String backend, Map<String, String> fields) {
    public RunHandle {
        Objects.requireNonNull(backend, "backend");
        fields = Map.copyOf(fields);
    }
}
