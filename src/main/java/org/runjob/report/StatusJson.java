package org.runjob.report;

import java.time.Instant;
import java.util.List;

import org.runjob.json.Json;
import org.runjob.launch.StatusSink;
import org.runjob.logs.Coordinator;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A run's {@code status.json}:
 * {@code {"run_id", "job", "state", "attempt", "coordinator": {"pid", "start_ticks", "host"}, "started", "updated",
 * "ranks": [{"rank", "node", "state", "pid", "last_output"}]}}
 * ({@code pid}: the worker's process id on its node, null until it started). {@code state} is {@code preflight},
 * {@code running}, {@code stopping}, or the end: {@code preflight failed}, {@code succeeded},
 * {@code failed}, {@code interrupted}.
 */
public final class StatusJson {

    private StatusJson() {
    }

    public static ObjectNode of(String runId, String job, String state, int attempt, Coordinator coordinator, Instant started,
                                Instant updated, List<StatusSink.Rank> ranks) {
        ObjectNode o = Json.object();
        o.put("run_id", runId).put("job", job).put("state", state).put("attempt", attempt);
        o.putObject("coordinator").put("pid", coordinator.pid()).put("start_ticks", coordinator.startTicks()).put("host", coordinator.host());
        o.put("started", started.toString()).put("updated", updated.toString());
        ArrayNode rs = o.putArray("ranks");
        for (StatusSink.Rank r : ranks) {
            ObjectNode n = rs.addObject().put("rank", r.rank()).put("node", r.node()).put("state", r.state().label());
            r.pid().ifPresentOrElse(p -> n.put("pid", p), () -> n.putNull("pid"));
            r.lastOutput().ifPresentOrElse(t -> n.put("last_output", t.toString()), () -> n.putNull("last_output"));
        }
        return o;
    }

    /** The coordinator a status.json names. */
    public static Coordinator coordinator(JsonNode status) {
        JsonNode c = status.path("coordinator");
        return new Coordinator(c.path("pid").asLong(-1), c.path("start_ticks").asLong(-1), c.path("host").asString("?"));
    }
}
