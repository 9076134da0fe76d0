package org.runjob.agent.gpu;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.runjob.json.Json;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * What a node's probe found: its GPUs in PCI bus order, and, when there are none to be had, why
 * ("no CUDA driver", "no CUDA device", ...). Travels as one line of JSON.
 *
 * @param driverVersion the CUDA driver API version (e.g. 12040), or 0 when there is no driver
 */
public record GpuInventory(List<Gpu> gpus, int driverVersion, Optional<String> unavailable) {

    private static final JsonMapper JSON = Json.MAPPER;

    public GpuInventory {
        gpus = List.copyOf(gpus);
    }

    public static GpuInventory none(String why) {
        return new GpuInventory(List.of(), 0, Optional.of(why));
    }

    public List<Integer> indices() {
        return gpus.stream().map(Gpu::index).toList();
    }

    public String toJson() {
        ObjectNode root = JSON.createObjectNode();
        root.put("driver_version", driverVersion);
        root.put("unavailable", unavailable.orElse(null));
        ArrayNode list = root.putArray("gpus");
        for (Gpu g : gpus) {
            list.addObject().put("index", g.index()).put("name", g.name()).put("total_bytes", g.totalBytes())
                    .put("free_bytes", g.freeBytes()).put("cc_major", g.ccMajor()).put("cc_minor", g.ccMinor())
                    .put("pci_bus_id", g.pciBusId()).put("free_unknown", g.freeUnknown().orElse(null));
        }
        return JSON.writeValueAsString(root);
    }

    public static GpuInventory fromJson(String text) {
        JsonNode root = JSON.readTree(text);
        List<Gpu> gpus = new ArrayList<>();
        for (JsonNode g : root.get("gpus")) {
            gpus.add(new Gpu(g.get("index").intValue(), g.get("name").stringValue(), g.get("total_bytes").longValue(),
                    g.get("free_bytes").longValue(), g.get("cc_major").intValue(), g.get("cc_minor").intValue(),
                    g.get("pci_bus_id").stringValue(), text(g.get("free_unknown"))));
        }
        return new GpuInventory(gpus, root.get("driver_version").intValue(), text(root.get("unavailable")));
    }

    private static Optional<String> text(JsonNode node) {
        return node == null || node.isNull() ? Optional.empty() : Optional.of(node.stringValue());
    }

    /** The inventory a probe answered (its JSON line), or none, saying why. */
    public static GpuInventory fromProbe(String answer) {
        String line = answer.strip();
        if (!line.startsWith("{")) {
            return none("the GPU probe failed: " + line);
        }
        try {
            return fromJson(line);
        } catch (RuntimeException e) {
            return none("the GPU probe answered nonsense: " + e.getMessage());
        }
    }
}
