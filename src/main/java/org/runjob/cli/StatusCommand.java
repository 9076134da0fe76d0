package org.runjob.cli;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/** {@code runjob status RUN}: a run's state, attempt and every rank's state and last output. */
@Command(name = "status", mixinStandardHelpOptions = true, description = "Show a run: its state, attempt, and each rank's state and last output.")
final class StatusCommand implements Callable<Integer> {

    private final Io io;

    @Parameters(index = "0", paramLabel = "RUN", description = "A run id, a unique prefix of one, last, or a run folder.")
    String run;

    @Mixin
    RunsOptions options;

    StatusCommand(Io io) {
        this.io = io;
    }

    /** "12 s ago", "4 min ago", "3 h ago", "2 d ago"; "-" for none. */
    static String age(String timestamp, Instant now) {
        if (timestamp == null) {
            return "-";
        }
        try {
            long s = Math.max(0, Duration.between(Instant.parse(timestamp), now).toSeconds());
            return s < 120 ? s + " s ago" : s < 7200 ? s / 60 + " min ago" : s < 172_800 ? s / 3600 + " h ago" : s / 86_400 + " d ago";
        } catch (DateTimeParseException e) {
            return timestamp;
        }
    }

    @Override
    public Integer call() throws Exception {
        var found = options.find(io, run);
        if (found.isEmpty()) {
            return ExitCode.INVALID;
        }
        if (found.get() instanceof RunsOptions.Submitted s) {
            return Remote.call(io, s.entry(), List.of("status", s.entry().runId(), "-o", options.output.name()));
        }
        RunRecords.Run r = ((RunsOptions.Here) found.get()).run();
        JsonNode ranks = r.status().map(s -> s.path("ranks")).orElse(JsonMapper.builder().build().createArrayNode());
        if (options.output == JobOptions.Output.json) {
            ObjectNode o = r.status().map(s -> (ObjectNode) s.deepCopy()).orElse(JsonMapper.builder().build().createObjectNode());
            o.put("state", r.state()).put("folder", r.folder().toString());
            r.exitCode().ifPresent(c -> o.put("exit_code", c));
            io.out().println(JsonMapper.builder().build().writerWithDefaultPrettyPrinter().writeValueAsString(o));
        } else {
            io.out().println("run " + r.runId() + " of job " + r.job() + ": " + r.state()
                    + r.exitCode().map(c -> " (exit " + c + ")").orElse("")
                    + r.status().map(s -> ", attempt " + s.path("attempt").asInt()).orElse("")
                    + r.coordinator().map(c -> ", runjob pid " + c.pid() + " on " + c.host() + (c.alive() ? "" : " (gone)")).orElse(""));
            io.out().printf("%-16s %5s  %-10s  %s%n", "node", "rank", "state", "last output");
            // a run whose runjob is gone cannot say what its ranks do: their last recorded state is not news
            boolean dead = r.state().equals("dead");
            Instant now = io.clock().instant();
            for (JsonNode k : ranks) {
                io.out().printf("%-16s %5d  %-10s  %s%n", k.path("node").asString(""), k.path("rank").asInt(),
                        dead ? "unknown" : k.path("state").asString(""), age(k.path("last_output").asString(null), now));
            }
            io.out().println("folder " + r.folder());
        }
        io.out().flush();
        return ExitCode.OK;
    }
}
