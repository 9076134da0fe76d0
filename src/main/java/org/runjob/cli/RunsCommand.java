package org.runjob.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;

/** {@code runjob runs}: every run under the logs dir: id, job, state, start, duration, exit code, git commit. */
@Command(name = "runs", mixinStandardHelpOptions = true, description = "List your runs, oldest first: those in ./runs and, from any directory, every run in your run index (local, detached, submitted); --logs-dir lists one logs dir only. A run whose runjob died shows as dead.")
final class RunsCommand implements Callable<Integer> {

    private final Io io;

    @Mixin
    RunsOptions options;

    RunsCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() throws Exception {
        List<RunRecords.Run> runs = new ArrayList<>(RunRecords.list(options.dir(), io.env()));
        if (options.logsDir == null) {
            Set<Path> seen = new HashSet<>();
            runs.forEach(r -> seen.add(r.folder().toAbsolutePath().normalize()));
            for (RunIndex.Entry e : RunIndex.list(io.env())) {
                if (e.isSubmitted()) {
                    runs.add(new RunRecords.Run(Path.of(e.node().get() + ":" + e.folder()), e.job(), e.runId(), "submitted to " + e.node().get(),
                            Optional.empty(), Optional.of(e.started()), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty()));
                } else if (seen.add(Path.of(e.folder()))) {
                    runs.add(RunRecords.read(Path.of(e.folder()), io.env()));
                }
            }
            runs.sort(Comparator.comparing(RunRecords.Run::runId));
        }
        if (options.output == JobOptions.Output.json) {
            ArrayNode a = JsonNodeFactory.instance.arrayNode();
            for (RunRecords.Run r : runs) {
                var o = a.addObject().put("run_id", r.runId()).put("job", r.job()).put("state", r.state()).put("folder", r.folder().toString());
                o.put("started", r.started().orElse(null)).put("ended", r.ended().orElse(null)).put("commit", r.commit().orElse(null));
                r.exitCode().ifPresentOrElse(c -> o.put("exit_code", c), () -> o.putNull("exit_code"));
            }
            io.out().println(JsonMapper.builder().build().writerWithDefaultPrettyPrinter().writeValueAsString(a));
        } else {
            io.out().printf("%-20s  %-16s  %-16s  %-24s  %9s  %4s  %s%n", "run", "job", "state", "started", "duration", "exit", "commit");
            for (RunRecords.Run r : runs) {
                String duration = r.started().flatMap(s -> r.ended().map(e -> Duration.between(Instant.parse(s), Instant.parse(e))))
                        .map(d -> String.format("%.1fs", d.toMillis() / 1000.0)).orElse("-");
                io.out().printf("%-20s  %-16s  %-16s  %-24s  %9s  %4s  %s%n", r.runId(), r.job(), r.state(),
                        r.started().map(s -> s.length() > 19 ? s.substring(0, 19) + "Z" : s).orElse("-"), duration,
                        r.exitCode().map(String::valueOf).orElse("-"), r.commit().map(c -> c.substring(0, Math.min(12, c.length()))).orElse("-"));
            }
        }
        io.out().flush();
        return ExitCode.OK;
    }
}
