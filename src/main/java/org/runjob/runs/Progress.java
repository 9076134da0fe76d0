package org.runjob.runs;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import org.runjob.json.Json;
import org.runjob.logs.MetricsLog;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * How far a run has come, without an SDK: rank 0's last {@code step} (its metrics file), the step
 * it ends at ({@code max_steps} in its last metrics line, else the job file's
 * {@code observe.max_steps}, which plan.json records), and its recent step rate: over its last
 * {@value TopView#MARKS} step marks of its current attempt (a restart's marks are not joined to
 * the attempt before it). The ETA is the steps left over that rate, for a live run only.
 */
public record Progress(double step, Optional<Long> maxSteps, Optional<Double> stepsPerSecond, boolean live) {

    /** The progress of run {@code r}; empty when rank 0 wrote no step. */
    public static Optional<Progress> of(RunRecords.Run r) {
        List<JsonNode> lines = TopView.lines(r.folder().resolve(MetricsLog.DIR).resolve("rank-0.jsonl"));
        List<JsonNode> marks = lines.stream().filter(l -> l.path("step").isNumber()).toList();
        if (marks.isEmpty()) {
            return Optional.empty();
        }
        JsonNode last = marks.get(marks.size() - 1);
        int attempt = last.path("attempt").asInt();
        List<JsonNode> current = marks.stream().filter(l -> l.path("attempt").asInt() == attempt).toList();
        current = current.subList(Math.max(0, current.size() - TopView.MARKS), current.size());
        Optional<Long> max = lines.get(lines.size() - 1).path("max_steps").isNumber()
                ? Optional.of(lines.get(lines.size() - 1).path("max_steps").asLong()) : planned(r);
        return Optional.of(new Progress(last.path("step").asDouble(), max.filter(m -> m > 0), rate(current), r.live()));
    }

    private static Optional<Long> planned(RunRecords.Run r) {
        try {
            JsonNode plan = Json.read(r.folder().resolve("plan.json"));
            return plan.path("max_steps").isNumber() ? Optional.of(plan.path("max_steps").asLong()) : Optional.empty();
        } catch (JacksonException | IOException e) {
            return Optional.empty();
        }
    }

    private static Optional<Double> rate(List<JsonNode> marks) {
        if (marks.size() < 2) {
            return Optional.empty();
        }
        JsonNode first = marks.get(0);
        JsonNode last = marks.get(marks.size() - 1);
        try {
            double s = Duration.between(Instant.parse(first.path("time").asString()), Instant.parse(last.path("time").asString())).toNanos() / 1e9;
            double steps = last.path("step").asDouble() - first.path("step").asDouble();
            return s > 0 && steps > 0 ? Optional.of(steps / s) : Optional.empty();
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    /** The share of the steps done, 0 to 1; empty without a {@code max_steps}. */
    public Optional<Double> fraction() {
        return maxSteps.map(m -> Math.min(1.0, Math.max(0.0, step / m)));
    }

    /** Seconds left at the recent rate; empty for a run that ended, without a rate or without a {@code max_steps}. */
    public Optional<Long> etaSeconds() {
        if (!live || maxSteps.isEmpty() || stepsPerSecond.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(Math.max(0, Math.round((maxSteps.get() - step) / stepsPerSecond.get())));
    }

    /** "step 450 of 1000 (45%), 12.5 steps/s, ETA 44 s"; the parts it knows. */
    public String text() {
        StringBuilder b = new StringBuilder("step " + plain(step));
        maxSteps.ifPresent(m -> b.append(" of ").append(m).append(String.format(Locale.ROOT, " (%.0f%%)", fraction().get() * 100)));
        stepsPerSecond.ifPresent(s -> b.append(String.format(Locale.ROOT, ", %.2f steps/s", s)));
        etaSeconds().ifPresent(e -> b.append(", ETA ").append(duration(e)));
        return b.toString();
    }

    /** The progress as JSON: {@code {"step", "max_steps", "fraction", "steps_per_s", "eta_s"}}, unknowns null. */
    public ObjectNode json() {
        ObjectNode o = Json.object();
        if (step == Math.rint(step) && Math.abs(step) < 1e15) {
            o.put("step", (long) step);
        } else {
            o.put("step", step);
        }
        if (maxSteps.isPresent()) {
            o.put("max_steps", maxSteps.get()).put("fraction", fraction().get());
        } else {
            o.putNull("max_steps").putNull("fraction");
        }
        if (stepsPerSecond.isPresent()) {
            o.put("steps_per_s", stepsPerSecond.get());
        } else {
            o.putNull("steps_per_s");
        }
        if (etaSeconds().isPresent()) {
            o.put("eta_s", etaSeconds().get());
        } else {
            o.putNull("eta_s");
        }
        return o;
    }

    /** "44 s", "12 min", "3 h 20 min". */
    static String duration(long s) {
        return s < 120 ? s + " s" : s < 7200 ? s / 60 + " min" : s / 3600 + " h " + s % 3600 / 60 + " min";
    }

    private static String plain(double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v);
    }
}
