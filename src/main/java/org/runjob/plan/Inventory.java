package org.runjob.plan;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import org.runjob.spec.GpuAuthority;

/**
 * Facts found at launch that the plan depends on: the GPU indices each node has (probed, or given
 * by the scheduler: {@code gpuAuthority}, the backend's), the network interface each node reaches
 * MASTER_ADDR by, MASTER_ADDR itself when the master's host is an ssh-config alias (the
 * HostName it resolved to), and what activating each node's environment changed. A dry run plans with {@link #unprobed}, which knows no fact.
 */
public record Inventory(Map<String, List<Integer>> gpusByNode, Map<String, String> socketInterfaces,
                        Optional<String> masterAddr, GpuAuthority gpuAuthority, Map<String, Activated> environments) {

    /** What activating a node's environment changed: the variables it set (new or changed) and those it removed. */
    public record Activated(Map<String, String> set, List<String> unset) {
        public static final Activated NOTHING = new Activated(Map.of(), List.of());

        public Activated {
            set = Collections.unmodifiableMap(new LinkedHashMap<>(set));
            unset = List.copyOf(unset);
        }
    }

    public Inventory {
        gpusByNode = Map.copyOf(gpusByNode);
        socketInterfaces = Map.copyOf(socketInterfaces);
        Objects.requireNonNull(masterAddr, "masterAddr");
        Objects.requireNonNull(gpuAuthority, "gpuAuthority");
        environments = Map.copyOf(environments);
    }

    public Inventory(Map<String, List<Integer>> gpusByNode, Map<String, String> socketInterfaces, Optional<String> masterAddr,
                     GpuAuthority gpuAuthority) {
        this(gpusByNode, socketInterfaces, masterAddr, gpuAuthority, Map.of());
    }

    /** The same facts with MASTER_ADDR {@code addr} (a spare that stands in for the master); unchanged when empty. */
    public Inventory withMasterAddr(Optional<String> addr) {
        return addr.isEmpty() ? this : new Inventory(gpusByNode, socketInterfaces, addr, gpuAuthority, environments);
    }

    /** What activating {@code node}'s environment changed; nothing when it has none or was not checked (a dry run). */
    public Activated environment(String node) {
        return environments.getOrDefault(node, Activated.NOTHING);
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
