package org.runjob.cli;

import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;

import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.runs.PlotPage;
import org.runjob.runs.RunRecords;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code runjob plot RUN [--metric NAME] [--out FILE]}: writes the run's metrics as one self-contained HTML page ({@link PlotPage}) and prints its path. */
@Command(name = "plot", mixinStandardHelpOptions = true, description = "Write one self-contained HTML page (no server, no network) with a chart per"
        + " metric the run's workers wrote to RUNJOB_METRICS_FILE, a line per rank, restarts marked, and each rank's GPU utilization;"
        + " print its path.", exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
            "0:the page is written (its path on stdout)",
            "2:usage error, no such run, no such metric, or nothing to plot"})
final class PlotCommand implements Callable<Integer> {

    private final Io io;

    @Parameters(index = "0", paramLabel = "RUN", description = "A run id, a unique prefix of one, last, or a run folder.")
    String run;

    @Option(names = "--metric", paramLabel = "NAME", description = "Only this metric (a field of the workers' metrics lines, e.g. loss).")
    String metric;

    @Option(names = "--out", paramLabel = "FILE", description = "Where to write the page (default: plot.html in the run folder).")
    Path out;

    @Mixin
    RunsOptions options;

    @Spec
    CommandSpec spec;

    PlotCommand(Io io) {
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
        PlotPage.Data data;
        try {
            data = PlotPage.data(r, Optional.ofNullable(metric));
        } catch (IllegalArgumentException e) {
            io.err().println("runjob: " + e.getMessage());
            return ExitCode.INVALID;
        }
        Path file = out != null ? out : r.folder().resolve(PlotPage.FILE);
        PlotPage.write(file, PlotPage.html(data));
        io.out().println(file.toAbsolutePath());
        io.out().flush();
        return ExitCode.OK;
    }
}
