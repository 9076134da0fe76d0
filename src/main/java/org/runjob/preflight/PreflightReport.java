package org.runjob.preflight;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.stream.Collectors;

import org.runjob.plan.Inventory;
import org.runjob.protocol.EnvironmentReply;
import org.runjob.protocol.GpuInventory;
import org.runjob.spec.GpuAuthority;

/**
 * The preflight result: a row per node, the rendezvous port chosen for {@code port: auto}, and the
 * MASTER_ADDR the checks used (the master's HostName when its host is an ssh-config alias).
 * A job starts only when {@link #ok()}. {@code backend} names how nodes were reached;
 * {@code environments} holds what each node's environment check found (its activation's changes
 * among it), for the nodes that passed it.
 */
public record PreflightReport(List<NodeReport> nodes, OptionalInt masterPort, Map<String, GpuInventory> gpus,
                              String masterAddr, String backend, Map<String, EnvironmentReply> environments) {

    public PreflightReport {
        nodes = List.copyOf(nodes);
        gpus = Map.copyOf(gpus);
        environments = Map.copyOf(environments);
    }

    /** An SSH job's report. */
    public PreflightReport(List<NodeReport> nodes, OptionalInt masterPort, Map<String, GpuInventory> gpus, String masterAddr) {
        this(nodes, masterPort, gpus, masterAddr, "ssh", Map.of());
    }

    /** A check's column name: the first is how nodes were reached ("ssh", "slurm"). */
    public String label(Check check) {
        return check == Check.LOGIN ? backend : check.label();
    }

    /** Node name to its GPU indices, for the nodes that were probed (those that use GPUs). */
    public Map<String, List<Integer>> gpuIndices() {
        return gpus.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().indices()));
    }

    /** What the plan is made of: each node's GPUs, interfaces and activated environment, and MASTER_ADDR, as preflight found them. */
    public Inventory inventory(GpuAuthority gpuAuthority) {
        return new Inventory(gpuIndices(), interfaces(), Optional.of(masterAddr()), gpuAuthority, activations());
    }

    /** What activating each node's environment changed, for the plan. */
    public Map<String, Inventory.Activated> activations() {
        return environments.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey,
                e -> new Inventory.Activated(e.getValue().set(), e.getValue().unset())));
    }

    public boolean ok() {
        return nodes.stream().noneMatch(NodeReport::failed);
    }

    /** Node name to the interface its workers should use for gloo/NCCL sockets, where found. */
    public Map<String, String> interfaces() {
        return nodes.stream().filter(n -> n.socketInterface().isPresent())
                .collect(Collectors.toMap(NodeReport::node, n -> n.socketInterface().get()));
    }
}
