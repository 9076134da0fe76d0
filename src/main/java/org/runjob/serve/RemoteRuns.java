package org.runjob.serve;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.runjob.json.Json;
import org.runjob.protocol.Printable;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.runs.Remote;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A submitted run read through its master node, as {@code status} and {@code logs} read it:
 * {@code runjob status RUN -o json} there for its page, {@code runjob logs RUN -f} there for its
 * live log, over the job's SSH settings.
 */
final class RemoteRuns implements LabServer.Submitted {

    private final Io io;

    RemoteRuns(Io io) {
        this.io = io;
    }

    private Io quiet(OutputStream out) {
        PrintStream ps = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream nothing = new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8);
        return new Io(ps, nothing, io.env(), io.clock(), io.random(), false, io.interrupts());
    }

    @Override
    public ObjectNode status(RunCatalog.Submitted run) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        int code = Remote.call(quiet(OutputStream.nullOutputStream()), run.entry(), List.of("status", run.entry().runId(), "-o", "json"),
                in -> got.write(in.readNBytes(Json.MAX_FILE_BYTES)));
        ObjectNode o = Json.object().put("run_id", run.entry().runId()).put("job", run.entry().job()).put("submitted", true)
                .put("master", run.entry().node().orElse("?"));
        if (code != ExitCode.OK) {
            return o.put("state", "submitted to " + run.entry().node().orElse("?") + " (unreachable)");
        }
        JsonNode s = Json.MAPPER.readTree(got.toString(StandardCharsets.UTF_8));
        o.put("state", Printable.line(s.path("state").asString("?"))).put("attempt", s.path("attempt").asInt());
        if (s.path("exit_code").isNumber()) {
            o.put("exit_code", s.path("exit_code").asInt());
        }
        o.put("live", !s.path("exit_code").isNumber());
        ArrayNode ranks = o.putArray("rank_rows");
        for (JsonNode k : s.path("ranks")) {
            ranks.addObject().put("rank", k.path("rank").asInt()).put("node", Printable.line(k.path("node").asString("")))
                    .put("state", Printable.line(k.path("state").asString(""))).put("pid", k.path("pid").asString("-"))
                    .put("last_line", Printable.line(k.path("last_line").asString("")));
        }
        if (s.has("progress")) {
            o.set("progress", s.get("progress"));
        }
        return o;
    }

    @Override
    public void log(RunCatalog.Submitted run, Optional<Integer> rank, OutputStream events) throws IOException {
        List<String> command = new ArrayList<>(List.of("logs", run.entry().runId(), "-f"));
        rank.ifPresent(r -> command.addAll(List.of("--ranks", Integer.toString(r))));
        Remote.call(quiet(OutputStream.nullOutputStream()), run.entry(), command, in -> {
            BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            String line;
            while ((line = lines.readLine()) != null) {
                LogStream.line(line, events);
                events.flush();
            }
        });
        LogStream.end(events);
    }
}
