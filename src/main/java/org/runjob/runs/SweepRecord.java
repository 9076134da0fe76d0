package org.runjob.runs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import org.runjob.json.Json;
import org.runjob.logs.Coordinator;
import org.runjob.logs.RunFolder;
import org.runjob.report.StatusJson;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A run's place in its sweep, in the run folder's {@code sweep.json}, written by the sweep's
 * runjob before it starts the run: {@code {"sweep", "job", "point", "size", "values": {NAME: VALUE},
 * "runjob": {"pid", "start_ticks", "host"}}} ({@code runjob}: the sweep's own runjob, which starts
 * the runs still waiting; {@code point} counts from 0). {@code runs} groups a sweep's runs by it and
 * {@code stop SWEEP} finds them by it.
 */
public record SweepRecord(String sweep, String job, int point, int size, Map<String, String> values, Coordinator runjob) {

    public static final String FILE = "sweep.json";
    /** What a sweep's id begins with, so that no run id is ever taken for one. */
    public static final String PREFIX = "sweep-";

    void write(Path folder) throws IOException {
        ObjectNode o = Json.object().put("sweep", sweep).put("job", job).put("point", point).put("size", size);
        ObjectNode v = o.putObject("values");
        values.forEach(v::put);
        o.putObject("runjob").put("pid", runjob.pid()).put("start_ticks", runjob.startTicks()).put("host", runjob.host());
        RunFolder.of(folder).writeJson(FILE, o);
    }

    /** The record in {@code folder}, or empty for a run of no sweep (or a record that cannot be read). */
    public static Optional<SweepRecord> read(Path folder) {
        Path file = folder.resolve(FILE);
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        try {
            JsonNode o = Json.read(file);
            Map<String, String> values = new LinkedHashMap<>();
            o.path("values").properties().forEach(e -> values.put(e.getKey(), e.getValue().asString()));
            ObjectNode holder = Json.object();
            holder.set("coordinator", o.path("runjob"));
            return Optional.of(new SweepRecord(o.path("sweep").asString(), o.path("job").asString(), o.path("point").asInt(),
                    o.path("size").asInt(), values, StatusJson.coordinator(holder)));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
