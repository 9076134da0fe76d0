package org.runjob.logs;

import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Consumer;

import org.runjob.json.Json;
import org.runjob.protocol.MetricsChunk;

import tools.jackson.databind.node.ObjectNode;

/** summary.json's {@code metrics}: what a run's {@link MetricsLog} took, when the run ends. */
public final class MetricsSummary {

    private MetricsSummary() {
    }

    /**
     * Per rank, the RUNJOB_METRICS_FILE lines taken and skipped and the last one; each node's last
     * GPU sample, and why a node sent none (a machine without the driver: not said on the console,
     * where every GPU-less run would say it); each registered source's last sample of each node;
     * empty when there is none of these. Lines skipped are said once per rank to {@code notes}.
     */
    public static Optional<ObjectNode> of(MetricsLog metrics, Consumer<String> notes) {
        if (metrics.counts().isEmpty() && metrics.lastGpus().isEmpty() && metrics.noGpus().isEmpty() && metrics.lastSamples().isEmpty()) {
            return Optional.empty();
        }
        ObjectNode m = Json.object().put("dir", MetricsLog.DIR);
        if (!metrics.lastGpus().isEmpty()) {
            ObjectNode gpus = m.putObject("gpus");
            new TreeMap<>(metrics.lastGpus()).forEach(gpus::set);
        }
        if (!metrics.noGpus().isEmpty()) {
            ObjectNode none = m.putObject("no_gpu_samples");
            new TreeMap<>(metrics.noGpus()).forEach(none::put);
        }
        if (!metrics.lastSamples().isEmpty()) {
            ObjectNode sources = m.putObject("sources");
            metrics.lastSamples().forEach((source, byNode) -> {
                ObjectNode o = sources.putObject(source);
                new TreeMap<>(byNode).forEach(o::set);
            });
        }
        m.set("stragglers", metrics.stragglers().json());
        ObjectNode ranks = m.putObject("ranks");
        Map<Integer, MetricsLog.Counts> counts = new TreeMap<>(metrics.counts());
        counts.forEach((rank, c) -> {
            ObjectNode r = ranks.putObject(Integer.toString(rank)).put("lines", c.lines()).put("malformed", c.malformed())
                    .put("skipped_bytes", c.skippedBytes());
            Optional.ofNullable(metrics.last().get(rank)).ifPresent(l -> r.set("last", l));
            if (c.malformed() > 0) {
                notes.accept("rank " + rank + " wrote " + c.malformed() + " line" + (c.malformed() == 1 ? "" : "s")
                        + " to RUNJOB_METRICS_FILE that " + (c.malformed() == 1 ? "is" : "are") + " not one JSON object: skipped (the first: "
                        + metrics.firstMalformed().getOrDefault(rank, "?") + "); write each line as json.dumps({...}) + \"\\n\"");
            }
            if (c.skippedBytes() > 0) {
                notes.accept("rank " + rank + "'s metrics file grew faster than runjob takes it (" + MetricsChunk.FORWARD_MIB_PER_S
                        + " MiB/s): " + c.skippedBytes() + " bytes skipped");
            }
        });
        return Optional.of(m);
    }
}
