package org.runjob.preflight;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.runjob.protocol.Gpu;
import org.runjob.protocol.GpuInventory;
import org.runjob.protocol.GpuProcess;
import org.runjob.protocol.Lease;

/**
 * Picking free GPUs ({@code gpus: {count: N}}) and reading the agent's lease answers. Pure: the
 * inventory and the answers are inputs.
 *
 * <p>A GPU is free when no compute process runs on it (the driver's list, named by user and
 * command), less than {@code max_used_mib} of its memory is in use, a context could be created on
 * it (the probe read its free memory), and no other runjob run holds its lease. The
 * agent tries the candidates least used first (ties by index) and leases the first N it can.
 */
public final class GpuPick {

    /** The GPUs to try, in order, and why each of the others is not free ("9000 MiB in use"). */
    record Candidates(List<Gpu> order, Map<Integer, String> notFree) {
    }

    private GpuPick() {
    }

    static Candidates candidates(GpuInventory inventory, int maxUsedMib) {
        List<Gpu> order = new ArrayList<>();
        Map<Integer, String> notFree = new LinkedHashMap<>();
        for (Gpu g : inventory.gpus()) {
            if (g.freeUnknown().isPresent()) {
                notFree.put(g.index(), g.freeUnknown().get());
            } else if (g.usedBytes() < 0) {
                notFree.put(g.index(), "its memory use could not be read");
            } else if (!inventory.processesOn(g.index()).isEmpty()) {
                notFree.put(g.index(), "in use by " + String.join(", ", inventory.processesOn(g.index()).stream().map(GpuProcess::text).toList()));
            } else if (mib(g.usedBytes()) >= maxUsedMib) {
                notFree.put(g.index(), mib(g.usedBytes()) + " MiB in use");
            } else {
                order.add(g);
            }
        }
        order.sort(Comparator.comparingLong(Gpu::usedBytes).thenComparingInt(Gpu::index));
        return new Candidates(order, notFree);
    }

    /** The request that leases {@code gpus} for run {@code runId} of job {@code job}, each that no other run holds. */
    public static Lease.Request hold(String job, String runId, List<Gpu> gpus) {
        return Lease.Request.hold(job, runId, slots(gpus));
    }

    /** The GPUs as the agent's lease files know them: index and PCI bus id, in the order given. */
    public static List<Lease.Slot> slots(List<Gpu> gpus) {
        return gpus.stream().map(g -> new Lease.Slot(g.index(), g.pciBusId())).toList();
    }

    /** Why the node has fewer than {@code count} free GPUs: each GPU and its reason, in index order. */
    static String shortage(int count, GpuInventory inventory, Candidates candidates, Lease.Answer answer) {
        Map<Integer, String> why = new TreeMap<>(candidates.notFree());
        answer.held().forEach((i, h) -> why.put(i, "held by " + h));
        int free = inventory.gpus().size() - why.size();
        StringBuilder b = new StringBuilder("needs " + count + " free GPU" + (count == 1 ? "" : "s") + ", " + free + " of "
                + inventory.gpus().size() + (free == 1 ? " is" : " are"));
        why.forEach((i, w) -> b.append("; GPU ").append(i).append(": ").append(w));
        return b.toString();
    }

    /** The inventory of the picked GPUs only (their indices stay those of the node). */
    public static GpuInventory only(GpuInventory inventory, List<Integer> picked) {
        List<Gpu> gpus = inventory.gpus().stream().filter(g -> picked.contains(g.index())).toList();
        return new GpuInventory(gpus, inventory.driverVersion(), inventory.unavailable(), inventory.processes());
    }

    private static long mib(long bytes) {
        return bytes >> 20;
    }
}
