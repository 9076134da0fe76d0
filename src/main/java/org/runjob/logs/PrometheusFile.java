package org.runjob.logs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code observe.prometheus}: the run's latest GPU samples, each rank's latest numeric metrics and
 * its straggler mark, in Prometheus' text exposition format, for node_exporter's textfile
 * collector. The file is replaced whole (a new file beside it, renamed over it: a collector never
 * reads half of one, and a link there is replaced, not followed), at most once a second and when
 * the run ends. Gauges, labelled {@code job} and {@code run}: {@code runjob_gpu_utilization_percent},
 * {@code runjob_gpu_memory_used_bytes}, {@code runjob_gpu_memory_total_bytes},
 * {@code runjob_gpu_power_watts}, {@code runjob_gpu_temperature_celsius},
 * {@code runjob_gpu_sm_clock_hertz} (and {@code node}, {@code gpu}); {@code runjob_metric} (and
 * {@code rank}, {@code name}: a numeric field of the rank's last metrics line);
 * {@code runjob_straggler} (and {@code rank}: 1 while it is named one); {@code runjob_source} (and
 * {@code source}, {@code node}, {@code name}: a numeric field of the node's last sample of a
 * registered observation source).
 */
final class PrometheusFile {

    private static final Duration EVERY = Duration.ofSeconds(1);
    private static final Set<String> OWN = Set.of("time", "rank", "attempt");
    private static final Set<String> SAMPLE_OWN = Set.of("time", "node", "attempt");

    private final Path file;
    private final String labels;
    private Instant written = Instant.EPOCH;

    PrometheusFile(Path file, String job, String run) {
        this.file = file;
        this.labels = "job=\"" + escaped(job) + "\",run=\"" + escaped(run) + "\"";
    }

    /** Writes the file when a second has passed since the last time, or {@code now} is forced. */
    void write(MetricsLog metrics, Instant now, boolean force) {
        if (!force && Duration.between(written, now).compareTo(EVERY) < 0) {
            return;
        }
        written = now;
        StringBuilder b = new StringBuilder();
        Map<String, String[]> gauges = new TreeMap<>();
        gauges.put("utilization_pct", new String[] {"runjob_gpu_utilization_percent", "1", "GPU utilization, percent (NVML)"});
        gauges.put("memory_used_mib", new String[] {"runjob_gpu_memory_used_bytes", "1048576", "GPU memory in use, bytes"});
        gauges.put("memory_total_mib", new String[] {"runjob_gpu_memory_total_bytes", "1048576", "GPU memory, bytes"});
        gauges.put("power_w", new String[] {"runjob_gpu_power_watts", "1", "GPU power draw, watts"});
        gauges.put("temperature_c", new String[] {"runjob_gpu_temperature_celsius", "1", "GPU temperature, degrees Celsius"});
        gauges.put("sm_clock_mhz", new String[] {"runjob_gpu_sm_clock_hertz", "1000000", "GPU SM clock, hertz"});
        for (Map.Entry<String, String[]> g : gauges.entrySet()) {
            StringBuilder rows = new StringBuilder();
            for (Map.Entry<String, ObjectNode> n : new TreeMap<>(metrics.lastGpus()).entrySet()) {
                for (JsonNode gpu : n.getValue().path("gpus")) {
                    JsonNode v = gpu.path(g.getKey());
                    if (v.isNumber()) {
                        rows.append(g.getValue()[0]).append('{').append(labels).append(",node=\"").append(escaped(n.getKey()))
                                .append("\",gpu=\"").append(gpu.path("index").asInt()).append("\"} ")
                                .append(number(v.asDouble() * Double.parseDouble(g.getValue()[1]))).append('\n');
                    }
                }
            }
            gauge(b, g.getValue()[0], g.getValue()[2], rows);
        }
        StringBuilder rows = new StringBuilder();
        for (Map.Entry<Integer, ObjectNode> r : new TreeMap<>(metrics.last()).entrySet()) {
            r.getValue().properties().forEach(f -> {
                if (!OWN.contains(f.getKey()) && f.getValue().isNumber()) {
                    rows.append("runjob_metric{").append(labels).append(",rank=\"").append(r.getKey()).append("\",name=\"")
                            .append(escaped(f.getKey())).append("\"} ").append(number(f.getValue().asDouble())).append('\n');
                }
            });
        }
        gauge(b, "runjob_metric", "the rank's last value of a numeric field of its RUNJOB_METRICS_FILE", rows);
        StringBuilder stragglers = new StringBuilder();
        for (StragglerWatch.Episode e : metrics.stragglers().episodes()) {
            if (e.to().isEmpty()) {
                stragglers.append("runjob_straggler{").append(labels).append(",rank=\"").append(e.rank()).append("\"} 1\n");
            }
        }
        gauge(b, "runjob_straggler", "1 while the rank is named a straggler", stragglers);
        StringBuilder sources = new StringBuilder();
        metrics.lastSamples().forEach((source, byNode) -> new TreeMap<>(byNode).forEach((node, sample) -> sample.properties().forEach(f -> {
            if (!SAMPLE_OWN.contains(f.getKey()) && f.getValue().isNumber()) {
                sources.append("runjob_source{").append(labels).append(",source=\"").append(escaped(source)).append("\",node=\"")
                        .append(escaped(node)).append("\",name=\"").append(escaped(f.getKey())).append("\"} ")
                        .append(number(f.getValue().asDouble())).append('\n');
            }
        })));
        gauge(b, "runjob_source", "the node's last value of a numeric field of an observation source's sample", sources);
        try {
            Path tmp = file.resolveSibling("." + file.getFileName() + "." + ProcessHandle.current().pid() + ".tmp");
            Files.deleteIfExists(tmp);
            Files.writeString(tmp, b.toString(), StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            // the next write tries again
        }
    }

    private static void gauge(StringBuilder b, String name, String help, CharSequence rows) {
        if (rows.length() > 0) {
            b.append("# HELP ").append(name).append(' ').append(help).append('\n').append("# TYPE ").append(name).append(" gauge\n")
                    .append(rows);
        }
    }

    private static String number(double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : String.format(Locale.ROOT, "%s", v);
    }

    private static String escaped(String v) {
        return v.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
