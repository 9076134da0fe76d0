package org.runjob.runs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import org.runjob.json.Json;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * A run's job as its last attempt ran it: each spare that stood in (the {@code stand_in} lines of
 * the run folder's {@code events.jsonl}, in order) in the place of the node it replaced, so a
 * rank's outputs are asked of the node that ran it last. A line that is cut, or names a spare or
 * node the job no longer has there, is passed over.
 */
public final class LastNodes {

    private LastNodes() {
    }

    /** {@code spec} with the stand-ins of the run in {@code folder}; {@code spec} itself when none stood in. */
    public static JobSpec of(JobSpec spec, Path folder) throws IOException {
        Path events = folder.resolve("events.jsonl");
        if (!Files.isRegularFile(events, LinkOption.NOFOLLOW_LINKS)) {
            return spec;
        }
        List<JsonNode> standIns;
        try (Stream<String> lines = Files.lines(events)) {
            standIns = lines.filter(l -> l.contains("\"stand_in\"")).map(LastNodes::parse).flatMap(Optional::stream)
                    .filter(e -> e.path("event").asString("").equals("stand_in")).toList();
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        JobSpec ran = spec;
        for (JsonNode s : standIns) {
            String node = s.path("node").asString("");
            Optional<NodeSpec> spare = ran.spares().stream().filter(n -> n.name().equals(s.path("spare").asString(""))).findFirst();
            if (spare.isPresent() && ran.nodes().stream().anyMatch(n -> n.name().equals(node))) {
                ran = ran.withStandIn(node, spare.get());
            }
        }
        return ran;
    }

    private static Optional<JsonNode> parse(String line) {
        try {
            return Optional.of(Json.MAPPER.readTree(line));
        } catch (JacksonException e) {
            return Optional.empty();
        }
    }
}
