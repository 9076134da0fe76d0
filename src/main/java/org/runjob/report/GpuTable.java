package org.runjob.report;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.runjob.json.Json;
import org.runjob.plan.LaunchPlan;
import org.runjob.plan.NodePlan;
import org.runjob.protocol.Gpu;
import org.runjob.protocol.GpuInventory;
import org.runjob.protocol.GpuProcess;

import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code runjob gpus}: a row per GPU (node, index, model, memory total/free, compute capability, bus
 * id, and who holds it: the runjob run that leased it, else the compute processes the driver lists
 * on it, named by user and command); a node without GPUs says why.
 */
public final class GpuTable {

    private GpuTable() {
    }

    /** @param leases per node, the GPUs another runjob run holds (index to "run R of job J (user U, since T)") */
    public static void print(Map<String, GpuInventory> nodes, Map<String, Map<Integer, String>> leases, PrintStream out) {
        Table t = Table.of("%-14s %5s  %-28s %10s %10s  %-4s  %-16s  %s", "node", "index", "model", "total", "free", "cc", "bus id", "held by");
        nodes.forEach((node, inv) -> {
            if (inv.gpus().isEmpty()) {
                t.row(node, "-", inv.unavailable().orElse("no GPU"));
            }
            for (Gpu g : inv.gpus()) {
                t.row(node, g.index(), g.name(), gib(g.totalBytes()), g.freeBytes() < 0 ? "?" : gib(g.freeBytes()), g.computeCapability(),
                        g.pciBusId(), holder(leases.getOrDefault(node, Map.of()).get(g.index()), inv.processesOn(g.index())));
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
                        .put("lease", leases.getOrDefault(node, Map.of()).get(g.index()))
                        .set("processes", processes(inv.processesOn(g.index())));
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

    /** Who holds a GPU: its runjob lease, else the processes on it ("alice: sleep 600 (pid 42, 512 MiB)"), else "-". */
    static String holder(String lease, List<GpuProcess> processes) {
        if (lease != null) {
            return lease;
        }
        return processes.isEmpty() ? "-" : String.join("; ", processes.stream().map(GpuProcess::text).toList());
    }

    /** The processes as JSON: {@code [{"pid", "user", "command", "used_mib"}]} ({@code used_mib} null when the driver does not say). */
    public static ArrayNode processes(List<GpuProcess> processes) {
        ArrayNode list = Json.MAPPER.createArrayNode();
        for (GpuProcess p : processes) {
            ObjectNode o = list.addObject().put("pid", p.pid()).put("user", p.user()).put("command", p.command());
            if (p.usedMib() >= 0) {
                o.put("used_mib", p.usedMib());
            } else {
                o.putNull("used_mib");
            }
        }
        return list;
    }

    private static String gib(long bytes) {
        return String.format(Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30));
    }
}
