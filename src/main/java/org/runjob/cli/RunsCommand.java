package org.runjob.cli;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

import org.runjob.json.Json;
import org.runjob.report.Table;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.RunIndex;
import org.runjob.runs.RunRecords;
import org.runjob.runs.SubmittedRuns;
import org.runjob.runs.SweepRecord;
import org.runjob.spec.Sweep;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code runjob runs}: every run under the logs dir: id, job, state, start, duration, exit code, git
 * commit; a sweep's runs together under a line naming the sweep, each with its values.
 */
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
        List<RunRecords.Run> runs = new ArrayList<>(options.local(io));
        if (options.logsDir == null) {
            runs.addAll(SubmittedRuns.list(io, RunIndex.list(io.env()).stream().filter(RunIndex.Entry::isSubmitted).toList()));
        }
        Map<RunRecords.Run, SweepRecord> sweeps = new IdentityHashMap<>();
        runs.forEach(r -> SweepRecord.read(r.folder()).ifPresent(w -> sweeps.put(r, w)));
        // a sweep's runs together, where the sweep began (its id is older than its runs'), in grid order
        runs.sort(Comparator.comparing(r -> Optional.ofNullable(sweeps.get(r))
                .map(w -> w.sweep().substring(SweepRecord.PREFIX.length()) + String.format("/%05d", w.point())).orElse(r.runId())));
        if (options.output == JobOptions.Output.json) {
            ArrayNode a = Json.array();
            for (RunRecords.Run r : runs) {
                var o = a.addObject().put("run_id", r.runId()).put("job", r.job()).put("state", r.state()).put("folder", r.folder().toString());
                o.put("started", r.started().orElse(null)).put("ended", r.ended().orElse(null)).put("commit", r.commit().orElse(null));
                r.exitCode().ifPresentOrElse(c -> o.put("exit_code", c), () -> o.putNull("exit_code"));
                r.why().ifPresent(why -> o.put("why", why));
                SweepRecord w = sweeps.get(r);
                if (w != null) {
                    ObjectNode sw = o.putObject("sweep").put("id", w.sweep()).put("point", w.point());
                    w.values().forEach(sw.putObject("values")::put);
                }
            }
            io.out().println(Json.pretty(a));
        } else {
            Table t = Table.of("%-20s  %-16s  %-16s  %-24s  %9s  %4s  %-12s  %s", "run", "job", "state", "started", "duration", "exit", "commit", "");
            String sweep = null;
            for (RunRecords.Run r : runs) {
                SweepRecord w = sweeps.get(r);
                if (w != null && !w.sweep().equals(sweep)) {
                    t.text(w.sweep() + " of job " + w.job() + ": " + w.size() + " run" + (w.size() == 1 ? "" : "s")
                            + " (runjob stop " + w.sweep() + " stops them all)");
                }
                sweep = w == null ? null : w.sweep();
                t.row(r.runId(), r.job(), r.state(), r.started().map(s -> s.length() > 19 ? s.substring(0, 19) + "Z" : s).orElse("-"), r.duration(),
                        r.exitCode().map(String::valueOf).orElse("-"), r.commit().map(c -> c.substring(0, Math.min(12, c.length()))).orElse("-"),
                        w == null ? "" : Sweep.describe(w.values()));
            }
            t.print(io.out());
        }
        io.out().flush();
        return ExitCode.OK;
    }
}
