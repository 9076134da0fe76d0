package org.runjob.serve;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.runjob.json.Json;
import org.runjob.logs.MetricsLog;
import org.runjob.node.Backend;
import org.runjob.protocol.Printable;
import org.runjob.runs.RunRecords;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeAddress;
import org.runjob.spec.NodeSpec;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The lab's servers: one {@link ServerWatch} per machine (the nodes of the job files given and
 * of the user's recent runs, a machine named twice watched once), each keeping an agent on its
 * server while the page is asked for them, and each GPU's holder named: a runjob run (its user,
 * run and, for the user's own runs, ranks), a process that is not runjob's (its user and command),
 * or free.
 */
final class Servers implements AutoCloseable {

    private static final Pattern LEASE = Pattern.compile("^run (\\S+) of job (\\S+) \\(user ([^,]+),");

    /** A machine to watch: its name on the page, and the job and node that reach it. */
    record Target(String key, String name, JobSpec spec, Backend backend, NodeSpec node) {
    }

    private final List<ServerWatch> watches = new ArrayList<>();

    Servers(List<Target> targets, Map<String, String> env, int intervalMs, long idleMs) {
        for (Target t : targets) {
            watches.add(new ServerWatch(t, env, intervalMs, idleMs));
        }
    }

    /** The machine a node is: "user@host:port" over SSH, "local" for this machine. */
    static String key(NodeSpec node) {
        if (node.address() instanceof NodeAddress.Ssh s) {
            return s.user().map(u -> u + "@").orElse("") + s.host() + ":" + s.port().orElse(22);
        }
        return "local";
    }

    /** Every server as the page shows it; asking keeps (or starts) their agents. */
    ArrayNode json(Function<String, Optional<RunRecords.Run>> myRun) {
        ArrayNode out = Json.array();
        for (ServerWatch w : watches) {
            ServerWatch.State s = w.ask();
            ObjectNode o = out.addObject().put("server", w.target().name()).put("address", Printable.line(w.target().node().address().describe()))
                    .put("state", s.state()).put("why", s.why().map(Printable::line).orElse(null))
                    .put("time", s.sampled().map(Instant::toString).orElse(null));
            ArrayNode gpus = o.putArray("gpus");
            for (var g : s.inventory().map(i -> i.gpus()).orElse(List.of())) {
                ObjectNode j = gpus.addObject().put("index", g.index()).put("name", Printable.line(g.name()))
                        .put("memory_total_mib", g.totalBytes() >> 20);
                JsonNode sample = s.sample().map(x -> gpu(x, g.index())).orElse(Json.object());
                for (String f : List.of("utilization_pct", "memory_used_mib", "power_w", "temperature_c")) {
                    j.set(f, sample.path(f).isNumber() ? sample.get(f) : null);
                }
                ArrayNode processes = j.putArray("processes");
                for (JsonNode p : sample.path("processes")) {
                    processes.addObject().put("pid", p.path("pid").asLong()).put("user", Printable.line(p.path("user").asString("?")))
                            .put("command", Printable.line(p.path("command").asString("?")))
                            .set("used_mib", p.path("used_mib").isNumber() ? p.get("used_mib") : null);
                }
                j.set("holder", holder(sample, w.target(), g.index(), myRun));
            }
        }
        return out;
    }

    private static JsonNode gpu(JsonNode sample, int index) {
        for (JsonNode g : sample.path("gpus")) {
            if (g.path("index").asInt(-1) == index) {
                return g;
            }
        }
        return Json.object();
    }

    /** {@code {"kind": "run"|"process"|"free"|"unknown", "text", "run_id", "job", "user", "ranks"}}. */
    static ObjectNode holder(JsonNode gpu, Target server, int index, Function<String, Optional<RunRecords.Run>> myRun) {
        ObjectNode h = Json.object();
        String lease = gpu.path("held_by").asString("");
        if (!lease.isEmpty()) {
            h.put("kind", "run").put("text", Printable.line(lease));
            Matcher m = LEASE.matcher(lease);
            if (m.find()) {
                h.put("run_id", m.group(1)).put("job", m.group(2)).put("user", m.group(3));
                Optional<RunRecords.Run> mine = myRun.apply(m.group(1));
                mine.ifPresent(r -> h.put("mine", true).set("ranks", ranksOn(r, server, index)));
            }
            return h;
        }
        if (gpu.path("processes").size() > 0) {
            List<String> who = new ArrayList<>();
            gpu.path("processes").forEach(p -> who.add(Printable.line(p.path("user").asString("?")) + ": " + Printable.line(p.path("command").asString("?"))
                    + " (pid " + p.path("pid").asLong() + ")"));
            return h.put("kind", "process").put("text", String.join("; ", who)).put("user", Printable.line(gpu.path("processes").get(0)
                    .path("user").asString("?")));
        }
        return gpu.isEmpty() ? h.put("kind", "unknown").put("text", "not sampled yet") : h.put("kind", "free").put("text", "free");
    }

    /** The ranks of the user's run {@code r} that use GPU {@code index} of this server, from the run's last GPU sample of it. */
    static ArrayNode ranksOn(RunRecords.Run r, Target server, int index) {
        ArrayNode out = Json.array();
        List<String> nodes = new ArrayList<>();
        try {
            for (JsonNode n : Json.read(r.folder().resolve("plan.json")).path("nodes")) {
                boolean same = server.node().local() ? n.path("local").asBoolean(false)
                        : server.node().address() instanceof NodeAddress.Ssh s && s.host().equals(n.path("host").asString(""));
                if (same) {
                    nodes.add(n.path("name").asString(""));
                }
            }
        } catch (JacksonException | IOException e) {
            return out;
        }
        for (String node : nodes) {
            Path samples = r.folder().resolve(MetricsLog.DIR).resolve("gpu-" + node + ".jsonl");
            List<String> lines = RunViews.tail(samples, 64 * 1024).lines().toList();
            for (int i = lines.size() - 1; i >= 0; i--) {
                try {
                    JsonNode g = gpu(Json.MAPPER.readTree(lines.get(i)), index);
                    g.path("ranks").forEach(out::add);
                    break;
                } catch (JacksonException e) {
                    // a line cut: the one before
                }
            }
        }
        return out;
    }

    /** The user's runs whose folders here were written in the last {@code days} days, newest first, with a job file. */
    static List<RunRecords.Run> recent(List<RunRecords.Run> runs, int days) {
        Instant since = Instant.now().minusSeconds(days * 86_400L);
        List<RunRecords.Run> out = new ArrayList<>();
        for (RunRecords.Run r : runs) {
            try {
                if (Files.isRegularFile(r.folder().resolve("job.yaml")) && Files.getLastModifiedTime(r.folder()).toInstant().isAfter(since)) {
                    out.add(0, r);
                }
            } catch (IOException e) {
                // gone meanwhile
            }
        }
        return out;
    }

    /** Distinct machines of {@code nodes}, first name wins. */
    static List<Target> distinct(Stream<Target> targets) {
        Map<String, Target> seen = new LinkedHashMap<>();
        targets.forEach(t -> seen.putIfAbsent(t.key(), t));
        return List.copyOf(seen.values());
    }

    @Override
    public void close() {
        watches.forEach(ServerWatch::close);
    }
}
