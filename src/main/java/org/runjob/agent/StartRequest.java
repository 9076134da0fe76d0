package org.runjob.agent;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The START frame's payload, as JSON: the node's workers, the stop grace period, and how long the
 * agent may go without any frame from the coordinator (it sends PING every few seconds) before it
 * treats the channel as lost; 0 turns that off.
 */
public record StartRequest(List<WorkerSpec> workers, long graceMillis, long heartbeatTimeoutMillis) {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    public StartRequest {
        workers = List.copyOf(workers);
    }

    public byte[] encode() {
        ObjectNode root = JSON.createObjectNode();
        root.put("grace_ms", graceMillis);
        root.put("heartbeat_timeout_ms", heartbeatTimeoutMillis);
        var list = root.putArray("workers");
        for (WorkerSpec w : workers) {
            ObjectNode o = list.addObject();
            o.put("rank", w.rank());
            o.put("workdir", w.workdir());
            var argv = o.putArray("argv");
            w.argv().forEach(argv::add);
            ObjectNode env = o.putObject("env");
            w.env().forEach(env::put);
        }
        return JSON.writeValueAsBytes(root);
    }

    public static StartRequest decode(byte[] bytes) {
        JsonNode root = JSON.readTree(new String(bytes, StandardCharsets.UTF_8));
        List<WorkerSpec> workers = new ArrayList<>();
        for (JsonNode o : root.get("workers")) {
            List<String> argv = new ArrayList<>();
            o.get("argv").forEach(a -> argv.add(a.stringValue()));
            Map<String, String> env = new LinkedHashMap<>();
            o.get("env").properties().forEach(e -> env.put(e.getKey(), e.getValue().stringValue()));
            workers.add(new WorkerSpec(o.get("rank").intValue(), argv, env, o.get("workdir").stringValue()));
        }
        return new StartRequest(workers, root.get("grace_ms").longValue(), root.get("heartbeat_timeout_ms").longValue());
    }
}
