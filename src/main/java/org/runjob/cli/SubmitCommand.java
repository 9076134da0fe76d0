package org.runjob.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.runs.Submit;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code runjob submit FILE [-- ARGS]}: hand a run to its nodes and exit ({@link Submit}). */
@Command(name = "submit", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        description = {"Hand a run to its cluster: the run's coordinator runs on the master node (or --coordinator NODE), so this machine may sleep,"
                + " go offline or be switched off once this returns. Preflight runs first, its table shown here.",
                "runjob runs / status / logs -f / stop reach the run later from any directory of this machine.", ""},
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
            "0:the run is submitted (its id on stdout)",
            "2:usage error or invalid job file, or a job submit cannot hand over (local nodes, Slurm)",
            "3:a node host could not start, or preflight failed; nothing was started"})
final class SubmitCommand implements Callable<Integer> {

    private final Io io;

    @Parameters(index = "0", arity = "0..1", paramLabel = "FILE", description = "The job file (not with --resume).")
    String file;

    @Parameters(index = "1..*", paramLabel = "ARGS", description = "After --: arguments appended to the entrypoint's.")
    List<String> args = new ArrayList<>();

    @Option(names = "--coordinator", paramLabel = "NODE", description = {"Run the coordinator on NODE instead of the master node."
            + " NODE may be one of the job's spares: it then runs no worker, so the run goes on when any node that runs workers is lost"
            + " (a spare stands in, or min_nodes lets it shrink)."})
    String coordinator;

    @Option(names = "--resume", paramLabel = "RUN", description = {"Queue the next attempt of a submitted Slurm run that ended"
            + " (the time limit, a failure): the same run id and folder, with the command it was first queued with."})
    String resume;

    @Option(names = "--dry-run", description = {"Print what would be submitted and submit nothing: under Slurm the exact sbatch command"
            + " and batch script (RUN_FOLDER and RUN_ID stand for what submit makes); over SSH the plan, as runjob FILE --dry-run."})
    boolean dryRun;

    @Option(names = "--max-parallel", paramLabel = "K", description = {"For a job with a sweep under Slurm: at most K of its runs at once"
            + " (one job array, --array=0-N%%K; runs that cannot be one array wait in K lanes, --dependency=singleton;"
            + " default: as many as Slurm has room for)."})
    Integer maxParallel;

    @Mixin
    JobOptions options;

    SubmitCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() throws Exception {
        if (resume != null) {
            if (file != null) {
                io.err().println("runjob: submit --resume RUN takes no job file: the run's folder holds the job it ran");
                return ExitCode.INVALID;
            }
            var found = new RunsOptions().find(io, resume);
            if (found.isEmpty()) {
                return ExitCode.INVALID;
            }
            if (!(found.get() instanceof RunsOptions.Here here)) {
                io.err().println("runjob: run " + resume + " was submitted over SSH: runjob resume continues a run that ran here");
                return ExitCode.INVALID;
            }
            return Submit.resume(io, here.run());
        }
        if (file == null) {
            io.err().println("runjob: submit needs a job file (or --resume RUN)");
            return ExitCode.INVALID;
        }
        if (maxParallel != null && maxParallel < 1) {
            io.err().println("runjob: --max-parallel takes a number of runs of at least 1");
            return ExitCode.INVALID;
        }
        if (dryRun) {
            Optional<Integer> queued = Submit.dryRun(io, file, options.sets, args, Optional.ofNullable(maxParallel));
            return queued.isPresent() ? queued.get() : PlanCommand.printPlan(io, file, options, args);
        }
        return Submit.submit(io, file, options.sets, args, Optional.ofNullable(coordinator), Optional.ofNullable(maxParallel));
    }
}
