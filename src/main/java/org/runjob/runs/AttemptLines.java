package org.runjob.runs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import org.runjob.json.Json;

import tools.jackson.databind.JsonNode;

/**
 * What {@code runjob status} says of a run's past attempts, from its {@code events.jsonl}: one line
 * per attempt that ended (its result, root cause and lost nodes), and one per spare that stood in
 * and per attempt that ran on fewer nodes. Nothing for a run of one attempt, or whose folder has no
 * such file; a line that is not JSON (a write cut short) is skipped.
 */
public final class AttemptLines {

    static final String EVENTS = "events.jsonl";
    private static final long MAX_BYTES = 4L << 20;

    private AttemptLines() {
    }

    /**
     * "goodput 0.63: training not redone (20 steps redone), over the run's wall time", or "goodput
     * 0.74: the attempts' running time, ...", from an ended run's summary with more than one
     * attempt; empty for one attempt (the header says how it ended) or a summary without goodput.
     */
    public static Optional<String> goodput(JsonNode summary) {
        if (!summary.path("goodput").isNumber() || summary.path("attempts").size() < 2) {
            return Optional.empty();
        }
        boolean steps = summary.path("goodput_basis").asString("").equals("steps");
        String what = steps ? "training not redone (" + Math.round(summary.path("redone_steps").asDouble()) + " steps redone)"
                : "the attempts' running time (no steps reported: redone work not told apart)";
        return Optional.of(String.format(Locale.ROOT, "goodput %.2f: %s, over the run's wall time", summary.path("goodput").asDouble(), what));
    }

    public static List<String> of(Path folder) {
        Path file = folder.resolve(EVENTS);
        List<String> out = new ArrayList<>();
        List<String> lines;
        try {
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS) || Files.size(file) > MAX_BYTES) {
                return out;
            }
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            return out;
        }
        List<JsonNode> events = new ArrayList<>();
        for (String line : lines) {
            try {
                events.add(Json.read(line));
            } catch (RuntimeException bad) {
                // a write cut short
            }
        }
        if (events.stream().filter(e -> e.path("event").asString("").equals("attempt_start")).count() < 2) {
            return out; // one attempt: the header line says how it stands
        }
        for (JsonNode e : events) {
            String text = switch (e.path("event").asString("")) {
                case "attempt_end" -> ended(e);
                case "stand_in" -> "  spare " + e.path("spare").asString() + " stands in for node " + e.path("node").asString()
                        + " (node rank " + e.path("node_rank").asInt() + ") from attempt " + e.path("attempt").asInt();
                case "shrink" -> "  attempt " + e.path("attempt").asInt() + " runs without " + String.join(", ", texts(e.path("dropped")))
                        + " on " + e.path("world_size").asInt() + " ranks";
                case "wait_for_node" -> "  waited " + Math.round(e.path("seconds").asDouble()) + " s for node " + e.path("node").asString()
                        + (e.path("answered").asBoolean() ? ": it answered" : ": no answer");
                default -> null;
            };
            if (text != null) {
                out.add(text);
            }
        }
        return out;
    }

    /** "attempt 0 failed at 07:00:12: rank 1: exit 7; lost h3 (its agent exited)". */
    private static String ended(JsonNode e) {
        StringBuilder b = new StringBuilder("attempt " + e.path("attempt").asInt() + " " + e.path("result").asString("?"));
        String time = e.path("time").asString("");
        if (time.length() >= 19) {
            b.append(" at ").append(time, 11, 19);
        }
        if (e.has("root_cause")) {
            b.append(": rank ").append(e.path("root_cause_rank").asInt()).append(": ").append(e.path("root_cause").asString());
        }
        List<String> lost = new ArrayList<>();
        e.path("lost").properties().forEach(p -> lost.add(p.getKey()));
        if (!lost.isEmpty()) {
            b.append("; lost ").append(String.join(", ", lost));
        }
        return b.toString();
    }

    private static List<String> texts(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(v -> out.add(v.asString()));
        return out;
    }
}
