package org.runjob.runs;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;

import org.runjob.json.Json;
import org.runjob.logs.MetricsLog;
import org.runjob.protocol.Printable;
import org.runjob.report.Table;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * What {@code runjob top} shows of a run, read from its folder alone (so a detached run's and a
 * submitted run's read the same, on the machine that holds the folder): per rank its node, the
 * GPUs it uses with their last sample (utilization, memory, power), its last step, its step time
 * over its last {@value #MARKS} step marks of the current attempt, its throughput (a {@code samples_per_s} or
 * {@code throughput} field of its last metrics line, else steps a second), how long ago it last
 * printed, its state, and whether it is named a straggler now ({@code stragglers.json}).
 */
public final class TopView {

    static final int MARKS = 20;
    private static final int TAIL_BYTES = 64 * 1024;

    private TopView() {
    }

    /** One GPU's last sample. */
    public record Gpu(int index, Optional<Double> utilization, Optional<Double> usedMib, Optional<Double> totalMib, Optional<Double> watts) {
    }

    /** One rank's row. */
    public record Row(int rank, String node, String state, List<Gpu> gpus, Optional<Double> step, Optional<Double> stepSeconds,
                      Optional<Rate> rate, Optional<Long> outputAgeSeconds, Optional<String> straggler) {
    }

    /** A rate: its value and unit ({@code /s}, {@code tok/s}, {@code step/s}). */
    public record Rate(double value, String unit, int decimals) {
        String text() {
            return String.format(Locale.ROOT, "%." + decimals + "f", value) + (unit.startsWith("/") ? "" : " ") + unit;
        }
    }

    public static List<Row> rows(RunRecords.Run r, Instant now) {
        Path metrics = r.folder().resolve(MetricsLog.DIR);
        Map<Integer, String> stragglers = stragglers(metrics);
        Map<String, JsonNode> samples = new TreeMap<>();
        List<Row> rows = new ArrayList<>();
        for (JsonNode k : r.status().map(s -> s.path("ranks").valueStream().toList()).orElse(List.of())) {
            int rank = k.path("rank").asInt();
            String node = k.path("node").asString("");
            JsonNode sample = samples.computeIfAbsent(node, n -> lastLine(metrics.resolve("gpu-" + n + ".jsonl")).orElse(Json.object()));
            List<Gpu> gpus = new ArrayList<>();
            for (JsonNode g : sample.path("gpus")) {
                boolean ours = false;
                for (JsonNode x : g.path("ranks")) {
                    ours |= x.asInt() == rank;
                }
                if (ours) {
                    gpus.add(new Gpu(g.path("index").asInt(), number(g, "utilization_pct"), number(g, "memory_used_mib"),
                            number(g, "memory_total_mib"), number(g, "power_w")));
                }
            }
            List<JsonNode> lines = lines(metrics.resolve("rank-" + rank + ".jsonl"));
            List<JsonNode> marks = lines.stream().filter(l -> l.path("step").isNumber()).toList();
            // the current attempt's: a restart goes back to its checkpoint's step, which is no step time
            int attempt = marks.isEmpty() ? 0 : marks.get(marks.size() - 1).path("attempt").asInt();
            marks = marks.stream().filter(l -> l.path("attempt").asInt() == attempt).toList();
            marks = marks.subList(Math.max(0, marks.size() - MARKS), marks.size());
            Optional<Double> step = marks.isEmpty() ? Optional.empty() : Optional.of(marks.get(marks.size() - 1).path("step").asDouble());
            Optional<Double> stepSeconds = stepSeconds(marks);
            Optional<Rate> rate = lines.isEmpty() ? Optional.empty() : rate(lines.get(lines.size() - 1), stepSeconds);
            rows.add(new Row(rank, node, k.path("state").asString(""), gpus, step, stepSeconds, rate,
                    StatusView.seconds(k.path("last_output").asString(null), now), Optional.ofNullable(stragglers.get(rank))));
        }
        return rows;
    }

    private static Optional<Double> stepSeconds(List<JsonNode> marks) {
        if (marks.size() < 2) {
            return Optional.empty();
        }
        JsonNode first = marks.get(0);
        JsonNode last = marks.get(marks.size() - 1);
        double steps = last.path("step").asDouble() - first.path("step").asDouble();
        try {
            double s = Duration.between(Instant.parse(first.path("time").asString()), Instant.parse(last.path("time").asString())).toNanos() / 1e9;
            return steps > 0 ? Optional.of(s / steps) : Optional.empty();
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    private static Optional<Rate> rate(JsonNode last, Optional<Double> stepSeconds) {
        for (String f : List.of("samples_per_s", "throughput", "tokens_per_s")) {
            if (last.path(f).isNumber()) {
                return Optional.of(new Rate(last.path(f).asDouble(), f.equals("tokens_per_s") ? "tok/s" : "/s", 1));
            }
        }
        return stepSeconds.filter(s -> s > 0).map(s -> new Rate(1 / s, "step/s", 2));
    }

    /** The ranks named stragglers now (to: null), with why. */
    private static Map<Integer, String> stragglers(Path metrics) {
        Map<Integer, String> out = new TreeMap<>();
        try {
            for (JsonNode e : Json.read(metrics.resolve("stragglers.json")).path("stragglers")) {
                if (e.path("to").isNull()) {
                    out.put(e.path("rank").asInt(), e.path("why").asString(""));
                }
            }
        } catch (JacksonException | IOException e) {
            // none named, or not yet
        }
        return out;
    }

    /** The JSON objects among the file's last lines. */
    static List<JsonNode> lines(Path file) {
        List<JsonNode> out = new ArrayList<>();
        if (!Files.isRegularFile(file)) {
            return out;
        }
        for (String line : StatusView.tail(file, TAIL_BYTES).lines().toList()) {
            try {
                JsonNode o = Json.MAPPER.readTree(line);
                if (o instanceof ObjectNode) {
                    out.add(o);
                }
            } catch (JacksonException e) {
                // the first line of the tail, cut
            }
        }
        return out;
    }

    private static Optional<JsonNode> lastLine(Path file) {
        List<JsonNode> all = lines(file);
        return all.isEmpty() ? Optional.empty() : Optional.of(all.get(all.size() - 1));
    }

    private static Optional<Double> number(JsonNode o, String field) {
        return o.path(field).isNumber() ? Optional.of(o.path(field).asDouble()) : Optional.empty();
    }

    private static final String BARS = "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588";
    /** Values a sparkline shows: rank 0's last ones. */
    static final int SPARK = 24;

    /**
     * Rank 0's main metric as a terminal sparkline of its last {@value #SPARK} values, then its
     * last value: {@code loss} when it writes one, else the first numeric field of its last line
     * ({@code step} and runjob's own fields aside); empty without metrics.
     */
    public static Optional<String> sparkline(RunRecords.Run r) {
        List<JsonNode> lines = lines(r.folder().resolve(MetricsLog.DIR).resolve("rank-0.jsonl"));
        if (lines.isEmpty()) {
            return Optional.empty();
        }
        JsonNode last = lines.get(lines.size() - 1);
        Optional<String> name = last.path("loss").isNumber() ? Optional.of("loss") : last.propertyNames().stream()
                .filter(n -> !List.of("time", "rank", "attempt", "step", "max_steps").contains(n) && last.path(n).isNumber()).findFirst();
        if (name.isEmpty()) {
            return Optional.empty();
        }
        List<Double> values = lines.stream().filter(l -> l.path(name.get()).isNumber()).map(l -> l.path(name.get()).asDouble()).toList();
        values = values.subList(Math.max(0, values.size() - SPARK), values.size());
        double lo = values.stream().mapToDouble(Double::doubleValue).min().orElse(0);
        double hi = values.stream().mapToDouble(Double::doubleValue).max().orElse(0);
        StringBuilder b = new StringBuilder();
        for (double v : values) {
            int k = hi == lo ? 0 : (int) Math.round((v - lo) / (hi - lo) * (BARS.length() - 1));
            b.append(BARS.charAt(k));
        }
        return Optional.of("rank 0 " + Printable.line(name.get()) + " " + b + " " + plain(values.get(values.size() - 1)) + " (its last " + values.size() + ")");
    }

    /** The table: a row per rank, then each straggler's why. */
    public static List<String> text(List<Row> rows) {
        Table t = Table.of("%5s  %-12s  %-5s  %5s  %-15s  %7s  %8s  %9s  %-12s  %-10s  %s", "rank", "node", "gpu", "util", "memory", "power", "step",
                "step time", "rate", "output", "state");
        for (Row x : rows) {
            String gpu = x.gpus().isEmpty() ? "-" : String.join(",", x.gpus().stream().map(g -> Integer.toString(g.index())).toList());
            t.row(x.rank(), x.node(), gpu, each(x.gpus(), g -> g.utilization().map(u -> String.format(Locale.ROOT, "%.0f%%", u))),
                    each(x.gpus(), g -> g.usedMib().flatMap(u -> g.totalMib().map(tot -> String.format(Locale.ROOT, "%.1f/%.1f GiB", u / 1024,
                            tot / 1024)))),
                    each(x.gpus(), g -> g.watts().map(w -> String.format(Locale.ROOT, "%.0f W", w))),
                    x.step().map(TopView::plain).orElse("-"), x.stepSeconds().map(s -> String.format(Locale.ROOT, "%.3f s", s)).orElse("-"),
                    x.rate().map(Rate::text).orElse("-"), x.outputAgeSeconds().map(StatusView::age).orElse("-"),
                    x.state() + (x.straggler().isPresent() ? " *" : ""));
        }
        List<String> out = new ArrayList<>(t.lines());
        rows.stream().filter(x -> x.straggler().isPresent())
                .forEach(x -> out.add("* straggler: rank " + x.rank() + " on " + x.node() + ": " + x.straggler().get()));
        return out;
    }

    private static String each(List<Gpu> gpus, Function<Gpu, Optional<String>> value) {
        if (gpus.isEmpty()) {
            return "-";
        }
        return String.join(",", gpus.stream().map(g -> value.apply(g).orElse("n/a")).toList());
    }

    private static String plain(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }

    /**
     * Each registered observation source's last sample of each node, from the run folder's
     * {@code metrics/source-NAME-NODE.jsonl}: {@code {"NAME": {"NODE": {"time", "node", "attempt", ...}}}}.
     */
    public static ObjectNode sources(RunRecords.Run r) {
        Path metrics = r.folder().resolve(MetricsLog.DIR);
        Map<String, Map<String, JsonNode>> last = new TreeMap<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(metrics, MetricsLog.SOURCE_PREFIX + "*.jsonl")) {
            for (Path f : files) {
                String name = f.getFileName().toString();
                String sourceAndNode = name.substring(MetricsLog.SOURCE_PREFIX.length(), name.length() - ".jsonl".length());
                int dash = sourceAndNode.indexOf('-');
                if (dash > 0 && Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)) {
                    lastLine(f).ifPresent(l -> last.computeIfAbsent(sourceAndNode.substring(0, dash), k -> new TreeMap<>())
                            .put(sourceAndNode.substring(dash + 1), l));
                }
            }
        } catch (IOException e) {
            // no metrics folder yet: no samples
        }
        ObjectNode out = Json.object();
        last.forEach((source, nodes) -> {
            ObjectNode o = out.putObject(source);
            nodes.forEach(o::set);
        });
        return out;
    }

    /** The rows as JSON: {@code [{"rank", "node", "state", "gpus": [{"index", ...}], "step", "step_time_s", "rate", "rate_unit", "last_output_age_s", "straggler"}]}. */
    public static ArrayNode json(List<Row> rows) {
        ArrayNode list = Json.MAPPER.createArrayNode();
        for (Row x : rows) {
            ObjectNode o = list.addObject().put("rank", x.rank()).put("node", x.node()).put("state", x.state());
            ArrayNode gpus = o.putArray("gpus");
            for (Gpu g : x.gpus()) {
                ObjectNode j = gpus.addObject().put("index", g.index());
                put(j, "utilization_pct", g.utilization());
                put(j, "memory_used_mib", g.usedMib());
                put(j, "memory_total_mib", g.totalMib());
                put(j, "power_w", g.watts());
            }
            if (x.step().isPresent() && x.step().get() == Math.rint(x.step().get()) && Math.abs(x.step().get()) < 1e15) {
                o.put("step", x.step().get().longValue()); // a step counted in whole steps stays a whole number
            } else {
                put(o, "step", x.step());
            }
            put(o, "step_time_s", x.stepSeconds());
            if (x.rate().isPresent()) {
                o.put("rate", x.rate().get().value()).put("rate_unit", x.rate().get().unit());
            } else {
                o.putNull("rate").putNull("rate_unit");
            }
            if (x.outputAgeSeconds().isPresent()) {
                o.put("last_output_age_s", x.outputAgeSeconds().get());
            } else {
                o.putNull("last_output_age_s");
            }
            if (x.straggler().isPresent()) {
                o.put("straggler", x.straggler().get());
            } else {
                o.putNull("straggler");
            }
        }
        return list;
    }

    private static void put(ObjectNode o, String field, Optional<Double> v) {
        if (v.isPresent()) {
            o.put(field, v.get());
        } else {
            o.putNull(field);
        }
    }
}
