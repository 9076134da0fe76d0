package org.runjob.preflight;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

import org.runjob.protocol.Gpu;
import org.runjob.protocol.GpuInventory;
import org.runjob.spec.NodeSpec;

/**
 * Judges a node's GPU request against what its probe found.
 *
 * <ul>
 *   <li>A node that asks for GPUs ({@code gpus: [..]} or {@code all}) but has no driver or no
 *       device fails, saying why.</li>
 *   <li>Every listed index must exist on the node; otherwise it fails, naming the index and what
 *       the node has.</li>
 *   <li>A listed GPU with more than {@value #BUSY_FRACTION_PERCENT}% of its memory in use is a
 *       warning naming it and how much is used (another job may be on it); so is one on which the
 *       driver refused the probe a context (full, or exclusive-process and taken), saying why.</li>
 *   <li>A model other than the first GPU node's is a warning (mixed V100 and A30 nodes, say), and
 *       so are mixed models among one node's GPUs.</li>
 * </ul>
 */
final class GpuCheck {

    static final int BUSY_FRACTION_PERCENT = 10;

    private GpuCheck() {
    }

    static Cell judge(NodeSpec node, GpuInventory inventory, Optional<String> referenceModel, String referenceNode) {
        boolean all = node.gpus() instanceof NodeSpec.GpuRequest.All;
        List<Integer> wanted = all ? inventory.indices() : ((NodeSpec.GpuRequest.Listed) node.gpus()).indices();
        if (inventory.unavailable().isPresent() || inventory.gpus().isEmpty()) {
            String why = inventory.unavailable().orElse("no CUDA device");
            return Cell.fail(all ? "gpus: all, but " + why : "lists GPUs " + wanted + ", but " + why);
        }
        int count = inventory.gpus().size();
        for (int index : wanted) {
            if (index >= count) {
                return Cell.fail("GPU " + index + " does not exist on node " + node.name() + ": it has " + count
                        + (count == 1 ? " GPU (index 0)" : " GPUs (indices 0-" + (count - 1) + ")"));
            }
        }
        StringBuilder warnings = new StringBuilder();
        for (int index : wanted) {
            Gpu g = inventory.gpus().get(index);
            long used = g.usedBytes();
            if (used >= 0 && used * 100 > g.totalBytes() * BUSY_FRACTION_PERCENT) {
                warnings.append(warnings.length() == 0 ? "" : "; ").append("GPU ").append(index).append(" has ")
                        .append(gib(used)).append(" of ").append(gib(g.totalBytes())).append(" in use (another job?)");
            } else if (g.freeUnknown().isPresent()) {
                warnings.append(warnings.length() == 0 ? "" : "; ").append("GPU ").append(index).append(": ")
                        .append(g.freeUnknown().get());
            }
        }
        Map<String, Integer> models = new LinkedHashMap<>();
        wanted.forEach(i -> models.merge(inventory.gpus().get(i).name(), 1, Integer::sum));
        String model = inventory.gpus().get(wanted.isEmpty() ? 0 : wanted.get(0)).name();
        if (models.size() > 1) {
            warnings.append(warnings.length() == 0 ? "" : "; ").append("mixed models on one node (the slowest sets the pace)");
        }
        if (referenceModel.isPresent() && !referenceModel.get().equals(model)) {
            warnings.append(warnings.length() == 0 ? "" : "; ").append("model ").append(model).append(" differs from node ")
                    .append(referenceNode).append("'s ").append(referenceModel.get());
        }
        String ok = wanted.size() + " of " + count + " " + (models.size() == 1 ? model
                : models.entrySet().stream().map(e -> e.getValue() + " " + e.getKey()).collect(Collectors.joining(" + ")));
        return warnings.length() == 0 ? Cell.ok(ok) : Cell.warn(ok + ": " + warnings);
    }

    static boolean wantsGpus(NodeSpec node) {
        return !(node.gpus() instanceof NodeSpec.GpuRequest.Listed l) || !l.indices().isEmpty();
    }

    private static String gib(long bytes) {
        return String.format(Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30));
    }
}
