package org.runjob.cli;

import java.io.IOException;
import java.time.Instant;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

import org.runjob.backends.Backends;
import org.runjob.json.Json;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.runs.AttemptLines;
import org.runjob.runs.LastNodes;
import org.runjob.runs.Progress;
import org.runjob.runs.Redraw;
import org.runjob.runs.RunRecords;
import org.runjob.runs.StatusView;
import org.runjob.runs.TopView;
import org.runjob.spec.InvalidSpecException;
import org.runjob.spec.JobSpec;
import org.runjob.spec.SpecLoader;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code runjob status RUN [--watch [SECONDS]]}: a run's state, attempt and every rank's state,
 * how long ago it printed and its last line ({@link StatusView}); {@code --watch} redraws it until
 * the run ends. {@code -o json} keeps raw times and adds each rank's last line and silent mark.
 */
@Command(name = "status", mixinStandardHelpOptions = true, description = "Show a run: its state, attempt, and each rank's state, last output and last line; --watch redraws it until the run ends.")
final class StatusCommand implements Callable<Integer> {

    private final Io io;

    @Parameters(index = "0", paramLabel = "RUN", description = "A run id, a unique prefix of one, last, or a run folder.")
    String run;

    @Option(names = "--watch", arity = "0..1", fallbackValue = "2", paramLabel = "SECONDS",
            description = "Show it again every SECONDS (default 2) until the run ends, in place on a terminal.")
    Integer watch;

    @Mixin
    RunsOptions options;

    @Spec
    CommandSpec spec;

    StatusCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() throws Exception {
        var found = options.find(io, run);
        if (found.isEmpty()) {
            return ExitCode.INVALID;
        }
        if (found.get() instanceof RunsOptions.Submitted s) {
            return Forward.call(io, spec, s.entry());
        }
        RunRecords.Run r = ((RunsOptions.Here) found.get()).run();
        if (watch == null) {
            show(r);
            return ExitCode.OK;
        }
        if (watch < 1) {
            io.err().println("runjob: --watch takes a number of seconds of at least 1");
            return ExitCode.INVALID;
        }
        return Redraw.until(io, r, watch, this::show);
    }

    private void show(RunRecords.Run r) {
        Instant now = io.clock().instant();
        List<StatusView.Row> rows = StatusView.rows(r, now);
        if (options.output == JobOptions.Output.json) {
            ObjectNode o = r.status().map(s -> (ObjectNode) s.deepCopy()).orElse(Json.object());
            o.put("state", r.state()).put("folder", r.folder().toString());
            r.why().ifPresent(w -> o.put("why", w));
            ObjectNode dirs = o.putObject("workdirs");
            workdirs(r).forEach(dirs::put);
            r.exitCode().ifPresent(c -> o.put("exit_code", c));
            r.ended().ifPresent(e -> o.put("ended", e));
            for (int i = 0; i < rows.size() && o.path("ranks").get(i) instanceof ObjectNode rank; i++) {
                rank.put("last_line", rows.get(i).lastLine()).put("silent", rows.get(i).silent());
            }
            List<TopView.Row> inside = TopView.rows(r, Instant.now());
            if (observed(inside)) {
                o.set("observed", TopView.json(inside));
            }
            Progress.of(r).ifPresent(p -> o.set("progress", p.json()));
            io.out().println(Json.pretty(o));
        } else {
            io.out().println("run " + r.runId() + " of job " + r.job() + ": " + r.state()
                    + r.exitCode().map(c -> " (exit " + c + ")").orElse("")
                    + r.status().map(s -> ", attempt " + s.path("attempt").asInt()).orElse("")
                    + r.coordinator().map(c -> ", runjob pid " + c.pid() + " on " + c.host() + (c.alive() ? "" : " (gone)")).orElse(""));
            r.why().ifPresent(w -> io.out().println("why: " + w));
            AttemptLines.of(r.folder()).forEach(io.out()::println);
            r.summary().flatMap(AttemptLines::goodput).ifPresent(io.out()::println);
            StatusView.text(r.runId(), rows).forEach(io.out()::println);
            Progress.of(r).ifPresent(p -> io.out().println("progress: " + p.text()));
            List<TopView.Row> inside = TopView.rows(r, Instant.now());
            if (observed(inside)) {
                io.out().println("inside the run (its last GPU samples and metrics; runjob top " + r.runId() + " follows them live):");
                TopView.text(inside).forEach(io.out()::println);
                TopView.sparkline(r).ifPresent(io.out()::println);
            }
            io.out().println("folder " + r.folder());
            Map<String, String> dirs = workdirs(r);
            if (new HashSet<>(dirs.values()).size() == 1) {
                io.out().println("workdir " + dirs.values().iterator().next() + " (on " + (dirs.size() == 1 ? "node " : "nodes ")
                        + String.join(", ", dirs.keySet()) + ")");
            } else {
                dirs.forEach((node, dir) -> io.out().println("workdir " + dir + " (on node " + node + ")"));
            }
        }
        io.out().flush();
    }

    /** True when a rank has a GPU sample or a step mark to show. */
    private static boolean observed(List<TopView.Row> rows) {
        return rows.stream().anyMatch(x -> !x.gpus().isEmpty() || x.step().isPresent());
    }

    /**
     * Where the run works on each node (its plan.json), in node order, a spare that stood in for a
     * node named with its own workdir in that node's place; empty when the plan is not there.
     */
    static Map<String, String> workdirs(RunRecords.Run r) {
        Map<String, String> out = new LinkedHashMap<>();
        try {
            JsonNode plan = Json.read(r.folder().resolve("plan.json"));
            plan.path("nodes").forEach(n -> out.put(n.path("name").asString(""), n.path("workdir").asString("")));
        } catch (JacksonException | IOException e) {
            return out; // a run refused before its plan was written
        }
        try {
            JobSpec planned = new SpecLoader(Map.of(), Backends.specs()).load(r.folder().resolve("job.yaml"), "job.yaml", List.of()).spec();
            JobSpec ran = LastNodes.of(planned, r.folder());
            if (ran != planned) {
                out.clear();
                ran.nodes().forEach(n -> out.put(n.name(), ran.runDirOf(n, Optional.of(r.runId()))));
            }
        } catch (InvalidSpecException | IOException | RuntimeException e) {
            // the plan's own workdirs, as they were planned
        }
        return out;
    }
}
