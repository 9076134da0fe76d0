package org.runjob.plan;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Facts probed on the nodes at launch that the plan depends on: the GPU indices each node has, and
 * the network interface each node reaches MASTER_ADDR by, and MASTER_ADDR itself when the master's
 * host is an ssh-config alias (the HostName it resolved to). A dry run plans with
 * {@link #unprobed()}, which knows nothing.
 */
public record Inventory(Map<String, List<Integer>> gpusByNode, Map<String, String> socketInterfaces,
                        Optional<String> masterAddr) {

    public Inventory {
        gpusByNode = Map.copyOf(gpusByNode);
        socketInterfaces = Map.copyOf(socketInterfaces);
        java.util.Objects.requireNonNull(masterAddr, "masterAddr");
    }

    public Inventory(Map<String, List<Integer>> gpusByNode, Map<String, String> socketInterfaces) {
        this(gpusByNode, socketInterfaces, Optional.empty());
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
