package org.runjob.cli;

import java.time.Instant;
import java.util.concurrent.Callable;

import org.runjob.json.Json;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.runs.Progress;
import org.runjob.runs.Redraw;
import org.runjob.runs.RunRecords;
import org.runjob.runs.TopView;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code runjob top RUN}: a live table of the run's ranks, their GPUs, steps and output
 * ({@link TopView}), redrawn every {@code --interval} seconds until the run ends or Ctrl-C;
 * {@code -o json} prints one snapshot. It reads the run folder only: a run's own output is untouched.
 */
@Command(name = "top", mixinStandardHelpOptions = true, description = "Show every rank of a running run live: its node, GPU utilization,"
        + " memory and power, last step, step time, throughput and last output; stragglers marked. -o json: one snapshot.")
final class TopCommand implements Callable<Integer> {

    private final Io io;

    @Parameters(index = "0", paramLabel = "RUN", description = "A run id, a unique prefix of one, last, or a run folder.")
    String run;

    @Option(names = "--interval", paramLabel = "SECONDS", defaultValue = "2", description = "Seconds between redraws (default 2).")
    int interval;

    @Mixin
    RunsOptions options;

    @Spec
    CommandSpec spec;

    TopCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() throws Exception {
        if (interval < 1) {
            io.err().println("runjob: --interval takes a number of seconds of at least 1");
            return ExitCode.INVALID;
        }
        var found = options.find(io, run);
        if (found.isEmpty()) {
            return ExitCode.INVALID;
        }
        if (found.get() instanceof RunsOptions.Submitted s) {
            return Forward.call(io, spec, s.entry());
        }
        RunRecords.Run r = ((RunsOptions.Here) found.get()).run();
        if (options.output == JobOptions.Output.json) {
            ObjectNode o = Json.object().put("run_id", r.runId()).put("job", r.job()).put("state", r.state()).put("time", io.clock().instant().toString());
            o.set("ranks", TopView.json(TopView.rows(r, Instant.now())));
            o.set("sources", TopView.sources(r));
            Progress.of(r).ifPresent(p -> o.set("progress", p.json()));
            io.out().println(Json.pretty(o));
            io.out().flush();
            return ExitCode.OK;
        }
        return Redraw.until(io, r, interval, run -> {
            io.out().println("run " + run.runId() + " of job " + run.job() + ": " + run.state()
                    + run.status().map(st -> ", attempt " + st.path("attempt").asInt()).orElse(""));
            TopView.text(TopView.rows(run, Instant.now())).forEach(io.out()::println);
            Progress.of(run).ifPresent(p -> io.out().println("progress: " + p.text()));
        });
    }
}
