package org.runjob.spec;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One machine of a job as written: how to reach it and how many workers to start there.
 *
 * @param host    SSH address or ssh-config alias; empty only for local nodes
 * @param port    SSH port; empty means the ssh config's, else 22
 * @param workers empty means one worker per GPU
 */
public record NodeSpec(
        String name,
        Optional<String> host,
        OptionalInt port,
        Optional<String> user,
        GpuRequest gpus,
        OptionalInt workers,
        boolean local,
        Optional<String> workdir,
        Map<String, String> env) {

    public NodeSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(port, "port");
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(gpus, "gpus");
        Objects.requireNonNull(workers, "workers");
        Objects.requireNonNull(workdir, "workdir");
        env = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(env));
        if (host.isEmpty() && !local) {
            throw new IllegalArgumentException("node " + name + " needs a host unless it is local");
        }
        if (workers.isPresent() && workers.getAsInt() < 1) {
            throw new IllegalArgumentException("node " + name + ": workers must be >= 1");
        }
        if (gpus instanceof GpuRequest.Listed l && l.indices().isEmpty() && workers.isEmpty()) {
            throw new IllegalArgumentException("node " + name + " has no GPUs and no worker count");
        }
    }

    /** The GPUs a node uses: listed indices (possibly none: a CPU node), or every GPU found at launch. */
    public sealed interface GpuRequest {
        record Listed(List<Integer> indices) implements GpuRequest {
            public Listed {
                indices = List.copyOf(indices);
                if (indices.stream().anyMatch(i -> i < 0) || indices.stream().distinct().count() != indices.size()) {
                    throw new IllegalArgumentException("GPU indices are distinct and >= 0: " + indices);
                }
            }
        }

        record All() implements GpuRequest {
        }
    }
}
