package org.runjob.runs;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.runjob.json.Json;
import org.runjob.node.FanOut;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.RunIndex;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Submitted runs as {@code runs} lists them: a run whose end is in the run index is shown from
 * there; the others are asked on their master nodes ({@code status RUN -o json}, all at once),
 * and a run found ended is recorded in the index, so it is asked once. A master node that cannot
 * be reached shows as {@code submitted to NODE (unreachable)}.
 */
public final class SubmittedRuns {

    private SubmittedRuns() {
    }

    public static List<RunRecords.Run> list(Io io, List<RunIndex.Entry> entries) {
        List<RunIndex.Entry> ask = entries.stream().filter(e -> e.end().isEmpty()).toList();
        Map<RunIndex.Entry, Optional<JsonNode>> told;
        try (FanOut fanOut = new FanOut(Math.max(1, ask.size()))) {
            told = fanOut.onEach(ask, e -> ask(io, e));
        }
        List<RunRecords.Run> out = new ArrayList<>();
        for (RunIndex.Entry e : entries) {
            String node = e.node().orElseThrow();
            Optional<JsonNode> state = e.end().isPresent() ? e.end() : told.get(e);
            if (e.end().isEmpty() && state.isPresent() && state.get().has("exit_code")) {
                ObjectNode end = Json.object().put("state", state.get().path("state").asString(""))
                        .put("exit_code", state.get().path("exit_code").asInt());
                copy(state.get(), end, "started");
                copy(state.get(), end, "ended");
                RunIndex.add(io, e.ended(end));
            }
            out.add(new RunRecords.Run(Path.of(node + ":" + e.folder()), e.job(), e.runId(),
                    state.map(s -> s.path("state").asString("") + " on " + node).orElse("submitted to " + node + " (unreachable)"),
                    state.filter(s -> s.has("exit_code")).map(s -> s.path("exit_code").asInt()),
                    Optional.of(state.map(s -> s.path("started").asString(e.started())).orElse(e.started())),
                    state.map(s -> s.path("ended").asString(null)), Optional.empty(), Optional.empty(), Optional.empty()));
        }
        return out;
    }

    private static void copy(JsonNode from, ObjectNode to, String key) {
        if (from.hasNonNull(key)) {
            to.put(key, from.get(key).asString());
        }
    }

    /** What the master node says of the run, or empty when it could not be asked. */
    private static Optional<JsonNode> ask(Io io, RunIndex.Entry e) {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        PrintStream quiet = new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8);
        Io asking = new Io(io.out(), quiet, io.env(), io.clock(), io.random(), false, io.interrupts());
        try {
            int code = Remote.call(asking, e, List.of("status", e.runId(), "-o", "json"), in -> got.write(in.readNBytes(Json.MAX_FILE_BYTES)));
            if (code != ExitCode.OK) {
                return Optional.empty();
            }
            return Optional.of(Json.MAPPER.readTree(got.toString(StandardCharsets.UTF_8)));
        } catch (IOException | RuntimeException ex) {
            return Optional.empty();
        }
    }
}
