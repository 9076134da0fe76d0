package org.runjob.spec;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One machine of a job as written: how to reach it and how many workers to start there.
 *
 * @param workers empty means one worker per GPU
 * @param environment the job's {@code environment:} merged key by key with the node's
 */
public record NodeSpec(
        String name,
        NodeAddress address,
        GpuRequest gpus,
        OptionalInt workers,
        Optional<String> workdir,
        Map<String, String> env,
        EnvironmentSpec environment) {

    /** A node without an environment of its own: its workers run with the agent's. */
    public NodeSpec(String name, NodeAddress address, GpuRequest gpus, OptionalInt workers, Optional<String> workdir, Map<String, String> env) {
        this(name, address, gpus, workers, workdir, env, EnvironmentSpec.NONE);
    }

    public NodeSpec {
        Objects.requireNonNull(environment, "environment");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(gpus, "gpus");
        Objects.requireNonNull(workers, "workers");
        Objects.requireNonNull(workdir, "workdir");
        env = Collections.unmodifiableMap(new LinkedHashMap<>(env));
        if (workers.isPresent() && workers.getAsInt() < 1) {
            throw new IllegalArgumentException("node " + name + ": workers must be >= 1");
        }
        if (gpus instanceof GpuRequest.Listed l && l.indices().isEmpty() && workers.isEmpty()) {
            throw new IllegalArgumentException("node " + name + " has no GPUs and no worker count");
        }
    }

    /** True for a node on this machine, started as a child process. */
    public boolean local() {
        return address instanceof NodeAddress.Local;
    }

    /** The GPUs a node uses: listed indices (possibly none: a CPU node), every GPU found at launch, or a count picked then. */
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

        /**
         * {@code count} free GPUs picked at launch: less than {@code maxUsedMib} of memory in use, a
         * context can be created, no other runjob run holds them; least used first, ties by index.
         */
        record Count(int count, int maxUsedMib) implements GpuRequest {
            /** Memory in use up to which a GPU counts as free, by default: a CUDA context alone takes about 300 MiB. */
            public static final int DEFAULT_MAX_USED_MIB = 500;

            public Count {
                if (count < 1 || maxUsedMib < 0) {
                    throw new IllegalArgumentException("count >= 1 and max_used_mib >= 0");
                }
            }
        }
    }
}
