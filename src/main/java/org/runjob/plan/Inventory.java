package org.runjob.plan;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Facts probed on the nodes at launch that the plan depends on: the GPU indices each node has, and
 * the network interface each node reaches MASTER_ADDR by. A dry run plans with {@link #unprobed()},
 * which knows nothing.
 */
public record Inventory(Map<String, List<Integer>> gpusByNode, Map<String, String> socketInterfaces) {

    public Inventory {
        gpusByNode = Map.copyOf(gpusByNode);
        socketInterfaces = Map.copyOf(socketInterfaces);
    }

    public static Inventory unprobed() {
        return new Inventory(Map.of(), Map.of());
    }

    /** The interface {@code node}'s route to MASTER_ADDR leaves by, when preflight found it. */
    public Optional<String> socketInterface(String node) {
        return Optional.ofNullable(socketInterfaces.get(node));
    }

    /** The GPU indices found on {@code node}, when it was probed. */
    public Optional<List<Integer>> gpus(String node) {
        return Optional.ofNullable(gpusByNode.get(node));
    }
}
