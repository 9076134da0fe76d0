package org.runjob.plan;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Facts probed on the nodes at launch that the plan depends on: for now, the GPU indices each node
 * has. A dry run plans with {@link #unprobed()}, which knows nothing.
 */
public record Inventory(Map<String, List<Integer>> gpusByNode) {

    public Inventory {
        gpusByNode = Map.copyOf(gpusByNode);
    }

    public static Inventory unprobed() {
        return new Inventory(Map.of());
    }

    /** The GPU indices found on {@code node}, when it was probed. */
    public Optional<List<Integer>> gpus(String node) {
        return Optional.ofNullable(gpusByNode.get(node));
    }
}
