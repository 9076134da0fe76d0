package org.runjob.preflight;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import org.runjob.protocol.GpuInventory;
import org.runjob.protocol.NodeFacts;
import org.runjob.session.NodeSession;

/**
 * Nodes' GPUs as their agents probe them, one probe per machine: agents that report the same
 * {@link NodeFacts#MACHINE} (several local nodes, say) see the same GPUs, so the first of them to
 * ask probes for all, and each GPU's context is taken once, not once per node. One instance per
 * command; an agent that reports no machine is probed on its own.
 */
public final class MachineGpus {

    private final Map<String, CompletableFuture<GpuInventory>> byMachine = new ConcurrentHashMap<>();

    /** The GPUs of the machine {@code session}'s agent runs on, whose HELLO said {@code facts}. */
    public GpuInventory of(NodeSession session, NodeFacts facts) {
        Optional<String> machine = facts.get(NodeFacts.MACHINE);
        if (machine.isEmpty()) {
            return session.gpus();
        }
        CompletableFuture<GpuInventory> mine = new CompletableFuture<>();
        CompletableFuture<GpuInventory> first = byMachine.putIfAbsent(machine.get(), mine);
        if (first != null) {
            return first.join();
        }
        try {
            mine.complete(session.gpus());
        } catch (RuntimeException e) {
            mine.completeExceptionally(e);
        }
        return mine.join();
    }
}
