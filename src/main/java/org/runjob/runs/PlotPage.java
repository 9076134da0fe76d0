package org.runjob.runs;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.runjob.json.Json;
import org.runjob.logs.MetricsLog;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code runjob plot}: one self-contained HTML file of a run's metrics (no server, no network:
 * its data and script are inline, and its Content-Security-Policy forbids every fetch): a chart
 * per numeric field of the ranks' {@code metrics/rank-N.jsonl} ({@code step} is the progress, not
 * charted), a line per rank and attempt over seconds since the run's start ({@code [seconds,
 * value, attempt]} points), each restart marked where its attempt's first line is (every time
 * charted is an agent's, so the marks agree with the lines), and each rank's GPU utilization
 * from the samples.
 */
public final class PlotPage {

    /** The file's name in the run folder. */
    public static final String FILE = "plot.html";
    private static final Set<String> NOT_CHARTED = Set.of("time", "rank", "attempt", "step", "max_steps");

    private PlotPage() {
    }

    /** The page's data, or why there is nothing to plot. */
    public record Data(ObjectNode json, Set<String> metrics) {
    }

    /**
     * The data of run {@code r}: every metric, or only {@code metric}.
     *
     * @throws IllegalArgumentException naming what the run has, when it has no metric {@code metric} or nothing to plot
     */
    public static Data data(RunRecords.Run r, Optional<String> metric) throws IOException {
        Path dir = r.folder().resolve(MetricsLog.DIR);
        Map<String, Map<Integer, List<double[]>>> metrics = new TreeMap<>();
        Map<Integer, List<double[]>> gpu = new TreeMap<>();
        List<Path> rankFiles = new ArrayList<>();
        List<Path> gpuFiles = new ArrayList<>();
        if (Files.isDirectory(dir)) {
            try (var files = Files.list(dir)) {
                for (Path f : files.sorted().toList()) {
                    String name = f.getFileName().toString();
                    if (name.matches("rank-\\d+\\.jsonl")) {
                        rankFiles.add(f);
                    } else if (name.matches("gpu-.+\\.jsonl")) {
                        gpuFiles.add(f);
                    }
                }
            }
        }
        List<JsonNode> all = new ArrayList<>();
        for (Path f : rankFiles) {
            all.addAll(jsonLines(f));
        }
        List<JsonNode> samples = new ArrayList<>();
        for (Path f : gpuFiles) {
            samples.addAll(jsonLines(f));
        }
        // every time here is an agent's: the run's start and each attempt's are their first line's
        Map<Integer, Instant> starts = new TreeMap<>();
        for (JsonNode line : concat(all, samples)) {
            time(line).ifPresent(t -> starts.merge(line.path("attempt").asInt(), t, (a, b) -> a.isBefore(b) ? a : b));
        }
        Instant t0 = starts.values().stream().min(Instant::compareTo).orElse(Instant.EPOCH);
        Set<String> found = new TreeSet<>();
        for (JsonNode line : all) {
            Optional<Instant> t = time(line);
            if (t.isEmpty()) {
                continue;
            }
            double x = seconds(t0, t.get());
            int rank = line.path("rank").asInt();
            for (var f : line.properties()) {
                if (!NOT_CHARTED.contains(f.getKey()) && f.getValue().isNumber()) {
                    found.add(f.getKey());
                    if (metric.isEmpty() || metric.get().equals(f.getKey())) {
                        metrics.computeIfAbsent(f.getKey(), k -> new TreeMap<>()).computeIfAbsent(rank, k -> new ArrayList<>())
                                .add(new double[] {x, f.getValue().asDouble(), line.path("attempt").asInt()});
                    }
                }
            }
        }
        for (JsonNode sample : samples) {
            Optional<Instant> t = time(sample);
            for (JsonNode g : sample.path("gpus")) {
                if (t.isPresent() && g.path("utilization_pct").isNumber()) {
                    for (JsonNode rank : g.path("ranks")) {
                        gpu.computeIfAbsent(rank.asInt(), k -> new ArrayList<>())
                                .add(new double[] {seconds(t0, t.get()), g.path("utilization_pct").asDouble(), sample.path("attempt").asInt()});
                    }
                }
            }
        }
        if (metric.isPresent() && !found.contains(metric.get())) {
            throw new IllegalArgumentException("run " + r.runId() + " has no metric " + metric.get()
                    + (found.isEmpty() ? " (its workers wrote none to RUNJOB_METRICS_FILE)" : "; it has " + String.join(", ", found)));
        }
        if (metrics.isEmpty() && gpu.isEmpty()) {
            throw new IllegalArgumentException("run " + r.runId() + " has nothing to plot: its workers wrote no metrics to"
                    + " RUNJOB_METRICS_FILE and no GPU was sampled");
        }
        ObjectNode o = Json.object().put("job", r.job()).put("run", r.runId()).put("start", t0.toString());
        ArrayNode attempts = o.putArray("attempts");
        starts.forEach((attempt, t) -> attempts.addObject().put("attempt", attempt).put("t", seconds(t0, t)));
        double end = 0;
        ObjectNode m = o.putObject("metrics");
        for (var e : metrics.entrySet()) {
            end = Math.max(end, series(m.putObject(e.getKey()), e.getValue()));
        }
        end = Math.max(end, series(o.putObject("gpu"), gpu));
        o.put("end", end);
        return new Data(o, found);
    }

    /** Puts each rank's points under its rank; the largest x. */
    private static double series(ObjectNode into, Map<Integer, List<double[]>> byRank) {
        double end = 0;
        for (var e : byRank.entrySet()) {
            ArrayNode points = into.putArray(Integer.toString(e.getKey()));
            for (double[] p : e.getValue()) {
                points.addArray().add(Math.round(p[0] * 1000) / 1000.0).add(p[1]).add((int) p[2]);
                end = Math.max(end, p[0]);
            }
        }
        return end;
    }

    private static List<JsonNode> concat(List<JsonNode> a, List<JsonNode> b) {
        List<JsonNode> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    /** The charts' script: it draws an inline {@code #data} at load, and defines {@code runjobPlot(data, container)}. */
    public static String script() throws IOException {
        try (InputStream in = PlotPage.class.getResourceAsStream("plot.js")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** The page for {@code data}, as one HTML document. */
    public static String html(Data data) throws IOException {
        String script = script();
        String json = Json.compact(data.json()).replace("<", "\\u003c");
        String title = escaped(data.json().path("job").asString() + " run " + data.json().path("run").asString());
        return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                + "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'\">\n"
                + "<title>runjob plot: " + title + "</title>\n<style>\n"
                + "body { font: 14px system-ui, sans-serif; margin: 24px; color: #222; }\n"
                + ".frame { fill: none; stroke: #bbb; } .line { fill: none; stroke-width: 1.6; }\n"
                + ".tick, .legend, .restart-label { font-size: 11px; fill: #555; }\n"
                + ".restart { stroke: #d62728; stroke-dasharray: 4 3; } .restart-label { fill: #d62728; }\n"
                + "h2 { font-size: 15px; margin: 18px 0 4px; }\n</style>\n</head>\n<body>\n"
                + "<h1>" + title + "</h1>\n<p>Seconds since the run's start; a dashed line marks where each restart began.</p>\n"
                + "<div id=\"charts\"></div>\n"
                + "<script type=\"application/json\" id=\"data\">" + json + "</script>\n"
                + "<script>\n" + script + "</script>\n</body>\n</html>\n";
    }

    /** Writes the page to {@code file} whole (a file beside it renamed over it). */
    public static void write(Path file, String html) throws IOException {
        Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
        Files.writeString(tmp, html, StandardCharsets.UTF_8);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static String escaped(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    private static double seconds(Instant t0, Instant t) {
        return Duration.between(t0, t).toNanos() / 1e9;
    }

    private static Optional<Instant> time(JsonNode o) {
        try {
            return Optional.of(Instant.parse(o.path("time").asString("")));
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    private static List<JsonNode> jsonLines(Path file) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        if (!Files.isRegularFile(file)) {
            return out;
        }
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            try {
                JsonNode o = Json.MAPPER.readTree(line);
                if (o instanceof ObjectNode) {
                    out.add(o);
                }
            } catch (JacksonException e) {
                // a line cut by a write under way
            }
        }
        return out;
    }
}
