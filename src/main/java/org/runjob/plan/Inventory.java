package org.runjob.plan;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import org.runjob.spec.GpuAuthority;

/**
 * Facts found at launch that the plan depends on: the GPU indices each node has (probed, or given
 * by the scheduler: {@code gpuAuthority}, the backend's), the network interface each node reaches
 * MASTER_ADDR by, and MASTER_ADDR itself when the master's host is an ssh-config alias (the
 * HostName it resolved to). A dry run plans with {@link #unprobed}, which knows no fact.
 */
public record Inventory(Map<String, List<Integer>> gpusByNode, Map<String, String> socketInterfaces,
                        Optional<String> masterAddr, GpuAuthority gpuAuthority) {

    public Inventory {
        gpusByNode = Map.copyOf(gpusByNode);
        socketInterfaces = Map.copyOf(socketInterfaces);
        Objects.requireNonNull(masterAddr, "masterAddr");
        Objects.requireNonNull(gpuAuthority, "gpuAuthority");
    }

    public Inventory(Map<String, List<Integer>> gpusByNode, Map<String, String> socketInterfaces) {
        this(gpusByNode, socketInterfaces, Optional.empty(), GpuAuthority.PROBED_AND_LEASED);
    }

    public static Inventory unprobed() {
        return unprobed(GpuAuthority.PROBED_AND_LEASED);
    }

    /** Nothing probed, on a backend where {@code authority} decides the GPUs. */
    public static Inventory unprobed(GpuAuthority authority) {
        return new Inventory(Map.of(), Map.of(), Optional.empty(), authority);
    }

    /** True when the scheduler gives the nodes their GPUs (a list is a count). */
    public boolean gpusGivenByScheduler() {
        return gpuAuthority == GpuAuthority.SCHEDULER_ASSIGNED;
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
