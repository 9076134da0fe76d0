package org.runjob.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
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
            "0:the run is submitted (its id on stdout); with --wait, it succeeded",
            "1:with --wait: the run failed (a sweep: the highest of its runs' exit codes)",
            "2:usage error or invalid job file, or a job submit cannot hand over (local nodes, Slurm)",
            "3:a node host could not start, or preflight failed; nothing was started",
            "130:with --wait: Ctrl-C stopped following (the run goes on), or the run was interrupted"})
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

    @Option(names = {"-W", "--wait"}, description = {"Once queued, follow the run's output as runjob logs -f does, until it ends, and exit"
            + " with its exit code (as sbatch --wait); a sweep's runs one after another, exiting with the highest code. Ctrl-C stops"
            + " the following, not the run."})
    boolean waitForEnd;

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
            return waitIfAsked(given -> Submit.resume(given, here.run()));
        }
        if (file == null) {
            io.err().println("runjob: submit needs a job file (or --resume RUN)");
            return ExitCode.INVALID;
        }
        if (maxParallel != null && maxParallel < 1) {
            io.err().println("runjob: --max-parallel takes a number of runs of at least 1");
            return ExitCode.INVALID;
        }
        if (dryRun && waitForEnd) {
            io.err().println("runjob: --wait follows a queued run, and --dry-run queues none");
            return ExitCode.INVALID;
        }
        if (dryRun) {
            Optional<Integer> queued = Submit.dryRun(io, file, options.sets, args, Optional.ofNullable(maxParallel));
            return queued.isPresent() ? queued.get() : PlanCommand.printPlan(io, file, options, args);
        }
        return waitIfAsked(given -> Submit.submit(given, file, options.sets, args, Optional.ofNullable(coordinator),
                Optional.ofNullable(maxParallel)));
    }

    /** A submit that prints the ids of the runs it queued, one per line, and returns its exit code. */
    private interface Queueing {
        int queue(Io io) throws IOException;
    }

    /**
     * {@code queueing} as asked: alone, or with {@code --wait} followed by {@code runjob logs RUN -f}
     * of each run it printed, in order; the highest of their exit codes.
     */
    private int waitIfAsked(Queueing queueing) throws IOException {
        if (!waitForEnd) {
            return queueing.queue(io);
        }
        // what the submit prints on stdout is the queued runs' ids: kept here, then printed as they came
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        PrintStream ids = new PrintStream(printed, true, StandardCharsets.UTF_8);
        int queued = queueing.queue(new Io(ids, io.err(), io.env(), io.clock(), io.random(), io.terminal(), io.interrupts()));
        ids.flush();
        io.out().print(printed.toString(StandardCharsets.UTF_8));
        io.out().flush();
        if (queued != ExitCode.OK) {
            return queued;
        }
        List<String> runs = printed.toString(StandardCharsets.UTF_8).lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
        int highest = ExitCode.OK;
        for (String run : runs) {
            int code = Main.run(io, "logs", run, "--follow");
            if (code == ExitCode.INTERRUPTED && io.interrupts().count() > 0) {
                io.err().println("runjob: stopped following; run " + run + " goes on (runjob stop " + run + " ends it)");
                return code;
            }
            highest = Math.max(highest, code);
        }
        return highest;
    }
}
