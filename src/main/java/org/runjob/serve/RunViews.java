package org.runjob.serve;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

import org.runjob.json.Json;
import org.runjob.logs.RunFolder;
import org.runjob.protocol.Printable;
import org.runjob.runs.AttemptLines;
import org.runjob.runs.PlotPage;
import org.runjob.runs.Progress;
import org.runjob.runs.RunRecords;
import org.runjob.runs.StatusView;
import org.runjob.runs.SweepRecord;
import org.runjob.runs.TopView;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The page's JSON of runs, read from run folders as {@code runs}, {@code status} and {@code top}
 * read them: one row per run for the front page, and one run whole for its page. Every text in
 * it that a node or a worker wrote is sent as a JSON string; the page puts it in as text only.
 */
final class RunViews {

    /** The events a run page shows: the last ones. */
    static final int EVENTS = 500;
    /** Files of the outputs folder a run page lists. */
    static final int OUTPUTS = 200;
    private static final int TAIL_BYTES = 8192;
    private static final int EVENTS_BYTES = 1 << 20;

    private RunViews() {
    }

    /** The front page's rows: live runs first, then the newest first. */
    static ArrayNode list(List<RunRecords.Run> runs, Set<String> submitted) {
        List<RunRecords.Run> order = new ArrayList<>(runs);
        Map<RunRecords.Run, SweepRecord> sweeps = new IdentityHashMap<>();
        runs.forEach(r -> SweepRecord.read(r.folder()).ifPresent(w -> sweeps.put(r, w)));
        // live runs first, then the newest; a sweep's runs together, where the sweep began, in grid order
        order.sort(Comparator.comparing((RunRecords.Run r) -> !r.live() || r.exitCode().isPresent() && !RunRecords.waitsInQueue(r))
                .thenComparing((RunRecords.Run r) -> Optional.ofNullable(sweeps.get(r)).map(w -> w.sweep().substring(SweepRecord.PREFIX.length()))
                        .orElse(r.runId()), Comparator.reverseOrder())
                .thenComparing(r -> Optional.ofNullable(sweeps.get(r)).map(SweepRecord::point).orElse(0)));
        ArrayNode a = Json.array();
        for (RunRecords.Run r : order) {
            a.add(row(r, submitted.contains(r.runId())));
        }
        return a;
    }

    /** One run's row: id, job, state, nodes, GPUs, attempt, stand-ins, stragglers, goodput, progress, last line, sweep. */
    static ObjectNode row(RunRecords.Run r, boolean submitted) {
        ObjectNode o = Json.object().put("run_id", r.runId()).put("job", r.job()).put("state", Printable.line(r.state()))
                .put("live", r.live()).put("submitted", submitted);
        o.put("started", r.started().orElse(null)).put("ended", r.ended().orElse(null));
        if (r.exitCode().isPresent()) {
            o.put("exit_code", r.exitCode().get());
        } else {
            o.putNull("exit_code");
        }
        if (submitted) {
            o.put("master", r.folder().toString().substring(0, Math.max(0, r.folder().toString().indexOf(':'))));
            return o;
        }
        Set<String> nodes = new LinkedHashSet<>();
        r.status().ifPresent(s -> s.path("ranks").forEach(k -> nodes.add(k.path("node").asString(""))));
        ArrayNode n = o.putArray("nodes");
        nodes.forEach(n::add);
        o.put("ranks", r.status().map(s -> s.path("ranks").size()).orElse(0));
        o.put("gpus", gpus(r.folder()));
        o.put("attempt", r.status().map(s -> s.path("attempt").asInt()).orElse(0));
        o.put("stand_ins", r.summary().map(s -> s.path("stand_ins").size()).orElse(standIns(r.folder())));
        o.put("stragglers", TopView.rows(r, Instant.now()).stream().filter(x -> x.straggler().isPresent()).count());
        r.summary().filter(s -> s.path("goodput").isNumber()).ifPresentOrElse(s -> o.put("goodput", s.path("goodput").asDouble()),
                () -> o.putNull("goodput"));
        Optional<Progress> p = Progress.of(r);
        if (p.isPresent()) {
            o.set("progress", p.get().json());
        } else {
            o.putNull("progress");
        }
        o.put("last_line", lastLine(r.folder()));
        SweepRecord.read(r.folder()).ifPresent(w -> {
            ObjectNode sw = o.putObject("sweep").put("id", w.sweep()).put("point", w.point()).put("size", w.size());
            w.values().forEach(sw.putObject("values")::put);
        });
        r.why().ifPresent(w -> o.put("why", Printable.line(w)));
        return o;
    }

    /** One run whole for its page: the row, then per rank, the events, the root cause, the last stacks' summary, the outputs. */
    static ObjectNode detail(RunRecords.Run r) {
        ObjectNode o = row(r, false);
        o.put("folder", r.folder().toString());
        List<StatusView.Row> status = StatusView.rows(r, Instant.now());
        ArrayNode ranks = TopView.json(TopView.rows(r, Instant.now()));
        for (int i = 0; i < ranks.size() && i < status.size(); i++) {
            ((ObjectNode) ranks.get(i)).put("pid", status.get(i).pid()).put("last_line", Printable.line(status.get(i).lastLine()))
                    .put("silent", status.get(i).silent());
        }
        o.set("rank_rows", ranks);
        o.set("events", events(r.folder()));
        ArrayNode lines = o.putArray("attempt_lines");
        AttemptLines.of(r.folder()).forEach(l -> lines.add(Printable.line(l)));
        r.summary().flatMap(AttemptLines::goodput).ifPresent(g -> o.put("goodput_text", g));
        rootCause(r).ifPresentOrElse(c -> o.put("root_cause", c), () -> o.putNull("root_cause"));
        stacks(r.folder()).ifPresentOrElse(s -> o.put("stacks", s), () -> o.putNull("stacks"));
        o.set("outputs", outputs(r.folder()));
        return o;
    }

    /** The run's GPUs: the cuda_visible_devices of its plan's nodes, counted. */
    private static int gpus(Path folder) {
        try {
            int n = 0;
            for (JsonNode node : Json.read(folder.resolve("plan.json")).path("nodes")) {
                String v = node.path("cuda_visible_devices").asString("");
                n += v.isBlank() ? 0 : v.split(",").length;
            }
            return n;
        } catch (JacksonException | IOException e) {
            return 0;
        }
    }

    private static int standIns(Path folder) {
        return (int) events(folder).valueStream().filter(e -> e.path("event").asString("").equals("stand_in")).count();
    }

    /** The last {@value #EVENTS} of events.jsonl (its last MiB), each an object as written. */
    static ArrayNode events(Path folder) {
        ArrayNode out = Json.array();
        String text = tail(folder.resolve("events.jsonl"), EVENTS_BYTES);
        List<String> lines = text.lines().toList();
        for (String line : lines.subList(Math.max(0, lines.size() - EVENTS), lines.size())) {
            try {
                JsonNode e = Json.MAPPER.readTree(line);
                if (e instanceof ObjectNode) {
                    out.add(e);
                }
            } catch (JacksonException e) {
                // the first line of the tail, cut
            }
        }
        return out;
    }

    /** "rank 1 on node n2: exited with 3", from the summary's last attempt that named a root cause. */
    static Optional<String> rootCause(RunRecords.Run r) {
        if (r.summary().isEmpty()) {
            return Optional.empty();
        }
        JsonNode attempts = r.summary().get().path("attempts");
        for (int i = attempts.size() - 1; i >= 0; i--) {
            JsonNode a = attempts.get(i);
            if (a.path("root_cause_rank").isNumber()) {
                int rank = a.path("root_cause_rank").asInt();
                for (JsonNode k : a.path("ranks")) {
                    if (k.path("rank").asInt() == rank) {
                        JsonNode out = k.path("outcome");
                        String how = out.path("type").asString("").equals("signaled") ? "killed by " + out.path("signal_name").asString("a signal")
                                : out.has("exit_code") ? "exited with " + out.path("exit_code").asInt() : out.path("type").asString("ended");
                        return Optional.of("attempt " + a.path("attempt").asInt() + ": rank " + rank + " on node "
                                + Printable.line(k.path("node").asString("?")) + " " + how);
                    }
                }
                return Optional.of("attempt " + a.path("attempt").asInt() + ": rank " + rank);
            }
        }
        return Optional.empty();
    }

    /** The newest stack capture's summary (stacks/CAPTURE/summary.txt), when there is one. */
    static Optional<String> stacks(Path folder) {
        Path dir = folder.resolve("stacks");
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return Optional.empty();
        }
        try (Stream<Path> captures = Files.list(dir)) {
            Optional<Path> newest = captures.filter(p -> Files.isRegularFile(p.resolve("summary.txt"), LinkOption.NOFOLLOW_LINKS))
                    .max(Comparator.comparing(p -> p.getFileName().toString()));
            return newest.map(p -> Printable.text(tail(p.resolve("summary.txt"), 16 * 1024)));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** The files the run brought back ({@code outputs/}), path and size, at most {@value #OUTPUTS}; links are not followed. */
    static ArrayNode outputs(Path folder) {
        ArrayNode out = Json.array();
        Path dir = folder.resolve("outputs");
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return out;
        }
        try (Stream<Path> files = Files.walk(dir, 8)) {
            files.filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)).sorted().limit(OUTPUTS).forEach(p -> {
                try {
                    out.addObject().put("path", Printable.line(dir.relativize(p).toString())).put("bytes", Files.size(p));
                } catch (IOException e) {
                    // gone meanwhile
                }
            });
        } catch (IOException | RuntimeException e) {
            // an outputs folder that cannot be read lists what it gave
        }
        return out;
    }

    /** The last line of the run's combined log, made printable. */
    private static String lastLine(Path folder) {
        List<String> lines = tail(folder.resolve(RunFolder.ALL_LOG), TAIL_BYTES).lines().filter(l -> !l.isBlank()).toList();
        if (lines.isEmpty()) {
            return "";
        }
        String last = lines.get(lines.size() - 1);
        return Printable.line(last.length() > 300 ? last.substring(0, 300) + "..." : last);
    }

    /** The file's last {@code bytes} bytes as UTF-8 ({@link StatusView#tail}); "" when it is missing, a link, or unreadable. */
    static String tail(Path file, int bytes) {
        return Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS) ? StatusView.tail(file, bytes) : "";
    }

    /** The run's metrics for its charts ({@code runjob plot}'s data), or why there are none. */
    static ObjectNode metrics(RunRecords.Run r) throws IOException {
        try {
            return PlotPage.data(r, Optional.empty()).json();
        } catch (IllegalArgumentException e) {
            return Json.object().put("none", e.getMessage());
        }
    }
}
