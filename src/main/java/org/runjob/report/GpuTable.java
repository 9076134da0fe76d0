package org.runjob.report;

import java.io.PrintStream;
import java.util.Map;

import org.runjob.json.Json;
import org.runjob.plan.LaunchPlan;
import org.runjob.plan.NodePlan;
import org.runjob.protocol.Gpu;
import org.runjob.protocol.GpuInventory;

import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code runjob gpus}: a row per GPU (node, index, model, memory total/free, compute capability, bus
 * id, and the runjob run that holds it, if any); a node without GPUs says why.
 */
public final class GpuTable {

    private GpuTable() {
    }

    /** @param leases per node, the GPUs another runjob run holds (index to "run R of job J (user U, since T)") */
    public static void print(Map<String, GpuInventory> nodes, Map<String, Map<Integer, String>> leases, PrintStream out) {
        Table t = Table.of("%-14s %5s  %-28s %10s %10s  %-4s  %-16s  %s", "node", "index", "model", "total", "free", "cc", "bus id", "lease");
        nodes.forEach((node, inv) -> {
            if (inv.gpus().isEmpty()) {
                t.row(node, "-", inv.unavailable().orElse("no GPU"));
            }
            for (Gpu g : inv.gpus()) {
                t.row(node, g.index(), g.name(), gib(g.totalBytes()), g.freeBytes() < 0 ? "?" : gib(g.freeBytes()), g.computeCapability(),
                        g.pciBusId(), leases.getOrDefault(node, Map.of()).getOrDefault(g.index(), "-"));
            }
        });
        t.print(out);
        out.flush();
    }

    public static ObjectNode json(Map<String, GpuInventory> nodes, Map<String, Map<Integer, String>> leases) {
        ObjectNode root = Json.object();
        ArrayNode list = root.putArray("nodes");
        nodes.forEach((node, inv) -> {
            ObjectNode n = list.addObject();
            n.put("node", node);
            n.put("driver_version", inv.driverVersion());
            n.put("unavailable", inv.unavailable().orElse(null));
            ArrayNode gpus = n.putArray("gpus");
            for (Gpu g : inv.gpus()) {
                gpus.addObject().put("index", g.index()).put("name", g.name()).put("total_bytes", g.totalBytes())
                        .put("free_bytes", g.freeBytes()).put("free_unknown", g.freeUnknown().orElse(null))
                        .put("compute_capability", g.computeCapability()).put("pci_bus_id", g.pciBusId())
                        .put("lease", leases.getOrDefault(node, Map.of()).get(g.index()));
            }
        });
        return root;
    }

    /**
     * For summary.json: per GPU node, the GPUs its workers were given (its CUDA_VISIBLE_DEVICES),
     * as index, model, memory and bus id, so a run's record says what hardware it ran on.
     */
    public static ObjectNode used(LaunchPlan plan, Map<String, GpuInventory> inventories) {
        ObjectNode root = Json.object();
        for (NodePlan node : plan.nodes()) {
            GpuInventory inv = inventories.get(node.name());
            if (inv == null || node.visibleDevices().isEmpty()) {
                continue;
            }
            ArrayNode list = root.putArray(node.name());
            for (String index : node.visibleDevices().split(",")) {
                Gpu g = inv.gpus().stream().filter(x -> index.trim().equals(Integer.toString(x.index()))).findFirst().orElse(null);
                if (g == null) {
                    continue;
                }
                list.addObject().put("index", g.index()).put("name", g.name()).put("total_bytes", g.totalBytes())
                        .put("compute_capability", g.computeCapability()).put("pci_bus_id", g.pciBusId());
            }
        }
        return root;
    }

    private static String gib(long bytes) {
        return String.format("%.1f GiB", bytes / (double) (1L << 30));
    }
}
