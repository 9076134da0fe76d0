package org.runjob.run;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.json.Json;
import org.runjob.launch.AttemptResult;
import org.runjob.launch.Outcome;
import org.runjob.launch.StandIn;
import org.runjob.launch.Timeline;

import tools.jackson.databind.node.ObjectNode;

/**
 * The run folder's {@code events.jsonl}: one JSON object per line, each with {@code time} and
 * {@code event}: {@code attempt_start} (attempt, nodes), {@code attempt_end} (attempt, result,
 * root-cause rank and outcome, lost nodes with their reasons), {@code stand_in} (spare, node,
 * node_rank, attempt, reason), {@code wait_for_node} (node, seconds, answered) and {@code shrink}
 * (attempt, the nodes dropped, the new world size), {@code health_check_failed} (attempt, node,
 * reason), {@code quarantine} (node, reason) and {@code keep_off} (the quarantined machines a
 * requeued batch job is kept off, and the scheduler's refusal, if any). An interrupted attempt's
 * end names who interrupted it ({@code interrupted_by}) when that was said. Appended as they
 * happen, never through a link; a line that cannot be written is logged and skipped.
 */
final class EventsFile implements Timeline {

    static final String NAME = "events.jsonl";
    private static final Logger LOG = LogManager.getLogger(EventsFile.class);

    private final Path file;
    private final Clock clock;

    EventsFile(Path folder, Clock clock) {
        this.file = folder.resolve(NAME);
        this.clock = clock;
    }

    @Override
    public void attemptStarted(int attempt, List<String> nodes) {
        ObjectNode o = event("attempt_start").put("attempt", attempt);
        nodes.forEach(o.putArray("nodes")::add);
        append(o);
    }

    @Override
    public void attemptEnded(AttemptResult r) {
        ObjectNode o = event("attempt_end").put("attempt", r.attempt()).put("result", r.verdict());
        r.rootCause().ifPresent(c -> o.put("root_cause_rank", c.rank()).put("root_cause", c.outcome().map(Outcome::describe).orElse("?")));
        ObjectNode lost = o.putObject("lost");
        r.lostNodes().forEach(lost::put);
        r.crashLoop().ifPresent(c -> o.put("crash_loop", c));
        r.nodesGone().ifPresent(g -> o.put("nodes_gone", g));
        if (r.interrupted()) {
            r.interruptReason().ifPresent(why -> o.put("interrupted_by", why));
        }
        append(o);
    }

    @Override
    public void standIn(StandIn s) {
        append(event("stand_in").put("spare", s.spare()).put("node", s.node()).put("node_rank", s.nodeRank()).put("attempt", s.attempt())
                .put("reason", s.why()));
    }

    @Override
    public void waitedForNode(String node, double seconds, boolean answered) {
        append(event("wait_for_node").put("node", node).put("seconds", Math.round(seconds * 1000) / 1000.0).put("answered", answered));
    }

    @Override
    public void shrunk(int attempt, List<String> dropped, int worldSize) {
        ObjectNode o = event("shrink").put("attempt", attempt).put("world_size", worldSize);
        dropped.forEach(o.putArray("dropped")::add);
        append(o);
    }

    @Override
    public void healthCheckFailed(int attempt, String node, String why) {
        append(event("health_check_failed").put("attempt", attempt).put("node", node).put("reason", why));
    }

    @Override
    public void quarantined(String node, String why) {
        append(event("quarantine").put("node", node).put("reason", why));
    }

    /** A requeued batch job kept off {@code machines} for its next start; {@code problem}: why the scheduler refused. */
    void keptOff(Set<String> machines, Optional<String> problem) {
        ObjectNode o = event("keep_off");
        machines.forEach(o.putArray("machines")::add);
        problem.ifPresent(p -> o.put("refused", p));
        append(o);
    }

    private ObjectNode event(String name) {
        return Json.object().put("time", clock.instant().toString()).put("event", name);
    }

    private synchronized void append(ObjectNode o) {
        try {
            Files.writeString(file, Json.MAPPER.writeValueAsString(o) + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot add to {}: {}", file, e.getMessage());
        }
    }
}
