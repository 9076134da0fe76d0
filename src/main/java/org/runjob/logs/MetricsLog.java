package org.runjob.logs;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.runjob.json.Json;
import org.runjob.observe.Sources;
import org.runjob.protocol.Printable;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The metrics workers write without an SDK: each JSON object a worker writes to its
 * RUNJOB_METRICS_FILE, one per line, goes to the run folder's {@code metrics/rank-N.jsonl} (all
 * attempts, in arrival order) as {@code {"time", "rank", "attempt", ...the worker's fields}}:
 * runjob's three fields first (the time the worker's agent read the line, ISO-8601 UTC), then the
 * worker's, less any of those three names. A line that is not one JSON object (a partial write,
 * text, an array, a number) is counted and skipped, never fatal ({@link #counts}). Each node's
 * GPU samples go to {@code metrics/gpu-NODE.jsonl} ({@link #gpu}).
 */
public final class MetricsLog implements AutoCloseable {

    /** The run folder's directory of metrics files. */
    public static final String DIR = "metrics";
    /** What the file of a registered source's samples is named by: {@code source-NAME-NODE.jsonl} (a source's name has no {@code -}). */
    public static final String SOURCE_PREFIX = "source-";

    /**
     * Per rank: lines taken, lines skipped as malformed, and bytes its agent skipped because the
     * file grew faster than it forwards one ({@code agent.MetricsTail}).
     */
    public record Counts(long lines, long malformed, long skippedBytes) {
        public Counts(long lines, long malformed) {
            this(lines, malformed, 0);
        }
    }

    private final Path dir;
    private final Clock clock;
    private final Map<String, OutputStream> files = new TreeMap<>();
    private final Map<String, ObjectNode> gpus = new TreeMap<>();
    /** Each registered source's last sample of each node, by source, then node. */
    private final Map<String, Map<String, ObjectNode>> samples = new TreeMap<>();
    private final Map<String, String> noGpus = new TreeMap<>();
    private final Map<Integer, Counts> counts = new TreeMap<>();
    private final Map<Integer, String> firstMalformed = new TreeMap<>();
    private final Map<Integer, ObjectNode> last = new TreeMap<>();

    private StragglerWatch stragglers;
    private final StepProgress progress = new StepProgress();

    public MetricsLog(Path folder, Clock clock) {
        this.dir = folder.resolve(DIR);
        this.clock = clock;
        this.stragglers = new StragglerWatch(folder, 20, Duration.ofSeconds(10), line -> { });
    }

    private PrometheusFile prometheus;

    /** The latest values also go to {@code file} in Prometheus' text format ({@code observe.prometheus}). */
    public void exportTo(Path file, String job, String run) {
        this.prometheus = new PrometheusFile(file, job, run);
    }

    /** Step marks and GPU utilization go to {@code watch} from now on. */
    public void watch(StragglerWatch watch) {
        this.stragglers = watch;
    }

    /** The training time the ranks' step marks show was not redone. */
    public StepProgress progress() {
        return progress;
    }

    public StragglerWatch stragglers() {
        return stragglers;
    }

    /** Takes {@code lines} (complete lines, each ending in a newline) of {@code rank} in {@code attempt}, now. */
    public void accept(int rank, int attempt, byte[] lines) throws IOException {
        accept("", rank, attempt, clock.instant(), lines);
    }

    /** Takes {@code lines} of {@code rank} on {@code node} in {@code attempt}, as its agent read them at {@code read}. */
    public void accept(String node, int rank, int attempt, Instant read, byte[] lines) throws IOException {
        String text = new String(lines, StandardCharsets.UTF_8);
        int start = 0;
        while (start < text.length()) {
            int nl = text.indexOf('\n', start);
            int end = nl < 0 ? text.length() : nl;
            String line = text.substring(start, end).strip();
            start = end + 1;
            if (!line.isEmpty()) {
                take(node, rank, attempt, read, line);
            }
        }
    }

    /** Counts {@code bytes} of {@code rank}'s metrics file that its agent skipped. */
    public void skipped(int rank, long bytes) {
        if (bytes > 0) {
            Counts c = counts.getOrDefault(rank, new Counts(0, 0));
            counts.put(rank, new Counts(c.lines(), c.malformed(), c.skippedBytes() + bytes));
        }
    }

    private void take(String node, int rank, int attempt, Instant read, String line) throws IOException {
        Counts c = counts.getOrDefault(rank, new Counts(0, 0));
        Optional<ObjectNode> parsed = object(line);
        if (parsed.isEmpty()) {
            counts.put(rank, new Counts(c.lines(), c.malformed() + 1, c.skippedBytes()));
            firstMalformed.putIfAbsent(rank, Printable.line(line.length() > 80 ? line.substring(0, 80) + "..." : line));
            return;
        }
        ObjectNode fields = parsed.get();
        ObjectNode out = withFields(Json.object().put("time", read.toString()).put("rank", rank).put("attempt", attempt), fields);
        file(rank).write((Json.compact(out) + "\n").getBytes(StandardCharsets.UTF_8));
        counts.put(rank, new Counts(c.lines() + 1, c.malformed(), c.skippedBytes()));
        last.put(rank, out);
        export(false);
        JsonNode step = fields.get("step");
        if (step != null && step.isNumber()) {
            stragglers.step(rank, node, read, step.asDouble());
            progress.step(rank, attempt, read, step.asDouble());
        }
    }

    /**
     * Takes one GPU sample of {@code node} (its agent's JSON line, {@code agent.GpuSampler}) to
     * {@code metrics/gpu-NODE.jsonl} as {@code {"time", "node", "attempt", "gpus"}}, or its reason for
     * having none ({@link #noGpus}); a line that is not an object is dropped.
     */
    public void gpu(String node, int attempt, String line) throws IOException {
        Optional<ObjectNode> parsed = object(line);
        if (parsed.isEmpty()) {
            return;
        }
        ObjectNode sample = parsed.get();
        if (sample.has("none")) {
            noGpus.putIfAbsent(node, sample.path("none").asString(""));
            return;
        }
        ObjectNode out = stamped(sample, node, attempt);
        out.set("gpus", sample.path("gpus"));
        for (JsonNode g : sample.path("gpus")) {
            if (g.path("utilization_pct").isNumber()) {
                g.path("ranks").forEach(r -> stragglers.utilization(r.asInt(), node, g.path("utilization_pct").asDouble()));
            }
        }
        file("gpu-" + node).write((Json.compact(out) + "\n").getBytes(StandardCharsets.UTF_8));
        gpus.put(node, out);
        export(false);
    }

    /** A sample line as a JSON object; empty for a line that is not one. */
    private static Optional<ObjectNode> object(String line) {
        try {
            return Json.MAPPER.readTree(line) instanceof ObjectNode o ? Optional.of(o) : Optional.empty();
        } catch (JacksonException e) {
            return Optional.empty();
        }
    }

    /** {@code out} with each field of {@code fields} it does not have yet (runjob's own fields come first and win). */
    private static ObjectNode withFields(ObjectNode out, ObjectNode fields) {
        fields.properties().forEach(e -> {
            if (!out.has(e.getKey())) {
                out.set(e.getKey(), e.getValue());
            }
        });
        return out;
    }

    /** The start of a sample as written: its own {@code time} (else now), the node and the attempt. */
    private ObjectNode stamped(ObjectNode sample, String node, int attempt) {
        return Json.object().put("time", sample.path("time").asString(clock.instant().toString())).put("node", node).put("attempt", attempt);
    }

    /**
     * Takes one sample of the registered observation source {@code source} of {@code node} (a
     * JSON object line, {@code org.runjob.observe.Source}) to {@code metrics/source-NAME-NODE.jsonl} as
     * {@code {"time", "node", "attempt", ...its fields}} ({@code time} the sample's own, when it
     * has one); a line that is not an object, or a source name that is not one, is dropped.
     */
    public void sample(String source, String node, int attempt, String line) throws IOException {
        Optional<ObjectNode> sample = object(line);
        if (!Sources.NAME.matcher(source).matches() || sample.isEmpty()) {
            return;
        }
        ObjectNode out = withFields(stamped(sample.get(), node, attempt), sample.get());
        file(SOURCE_PREFIX + source + "-" + node).write((Json.compact(out) + "\n").getBytes(StandardCharsets.UTF_8));
        samples.computeIfAbsent(source, k -> new TreeMap<>()).put(node, out);
        export(false);
    }

    /** Each registered source's last sample of each node, by source, then node. */
    public Map<String, Map<String, ObjectNode>> lastSamples() {
        Map<String, Map<String, ObjectNode>> copy = new TreeMap<>();
        samples.forEach((s, byNode) -> copy.put(s, Map.copyOf(byNode)));
        return copy;
    }

    /** Each node's last GPU sample, by node. */
    public Map<String, ObjectNode> lastGpus() {
        return Map.copyOf(gpus);
    }

    /** Why a node sent no GPU samples, by node. */
    public Map<String, String> noGpus() {
        return Map.copyOf(noGpus);
    }

    private OutputStream file(int rank) throws IOException {
        return file("rank-" + rank);
    }

    private OutputStream file(String name) throws IOException {
        OutputStream o = files.get(name);
        if (o == null) {
            Files.createDirectories(dir);
            o = new BufferedOutputStream(Files.newOutputStream(dir.resolve(name + ".jsonl"), StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS), 1 << 14);
            files.put(name, o);
        }
        return o;
    }

    /** Each rank's first line that was not one JSON object (cut to 80 characters, escaped), by rank. */
    public Map<Integer, String> firstMalformed() {
        return Map.copyOf(firstMalformed);
    }

    /** Each rank's counts so far, by rank. */
    public Map<Integer, Counts> counts() {
        return Map.copyOf(counts);
    }

    /** Each rank's last metrics line as written, by rank. */
    public Map<Integer, ObjectNode> last() {
        return Map.copyOf(last);
    }

    public void flush() throws IOException {
        for (OutputStream o : files.values()) {
            o.flush();
        }
    }

    private void export(boolean force) {
        if (prometheus != null) {
            prometheus.write(this, clock.instant(), force);
        }
    }

    @Override
    public void close() throws IOException {
        export(true);
        for (OutputStream o : files.values()) {
            o.close();
        }
        files.clear();
    }
}
