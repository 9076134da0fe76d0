package org.runjob.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

import org.runjob.protocol.HostedRun;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.Jobs;
import org.runjob.run.RankSelection;
import org.runjob.run.Requeued;
import org.runjob.run.RunJob;
import org.runjob.run.RunRequest;
import org.runjob.runs.ArrayTask;
import org.runjob.runs.Detach;
import org.runjob.runs.HostedStart;
import org.runjob.runs.SweepRun;
import org.runjob.spec.SpecLoader;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code runjob [--dry-run] FILE}: run a job, or with --dry-run print the plan that would run. */
@Command(name = "runjob", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        sortOptions = false, usageHelpAutoWidth = true,
        description = {"Launch a distributed training job on several machines from one YAML job file.", ""},
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
            "0:success; or the dry run / validation found nothing wrong",
            "1:the job ran and a worker failed",
            "2:usage error or invalid job file",
            "3:preflight failed; nothing was started",
            "4:internal error",
            "130:interrupted; all workers were stopped first"})
final class RunjobCommand implements Callable<Integer> {

    private final Io io;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", paramLabel = "FILE", description = "The job file.")
    String file;

    @Option(names = "--dry-run", description = "Validate and print the plan; contact no machine, start nothing.")
    boolean dryRun;

    @Option(names = "--ranks", split = ",", paramLabel = "RANKS", converter = RankParts.class,
            description = "Show only these ranks' output on the console, e.g. --ranks 0-3,7 (every rank is still recorded).")
    List<String> ranks = new ArrayList<>();

    @Parameters(index = "1..*", paramLabel = "ARGS",
            description = "After --: arguments appended to the entrypoint's, e.g. runjob job.yaml -- --lr 0.01 (recorded in the run folder).")
    List<String> args = new ArrayList<>();

    @Option(names = "--detach", description = "Run preflight here, then leave the run to a runjob of its own in the background"
            + " (no terminal; output to the run folder) and print its id; runjob runs / status / logs -f / stop reach it.")
    boolean detach;

    @Mixin
    GpuWaitOption waitForGpus;

    @Option(names = "--force-setup", description = "Run every node's environment setup, even where its content has not changed.")
    boolean forceSetup;

    @Option(names = "--max-parallel", paramLabel = "K",
            description = "For a job with a sweep: at most K of its runs at once (default: all; each waits for free GPUs).")
    Integer maxParallel;

    /** The run id a detaching runjob chose for the runjob it starts. */
    @Option(names = "--run-id", hidden = true)
    String runId;

    /** A queued run's coordinator: a run folder with attempts in it was requeued, and goes on ({@link Requeued}). */
    @Option(names = "--continue-requeued", hidden = true)
    boolean continueRequeued;

    /**
     * A task of a submitted sweep's job array: FILE is the sweep's table, which names this task's
     * run, its job file and point ({@link ArrayTask}).
     */
    @Option(names = "--array-task", hidden = true)
    boolean arrayTask;

    /** A submitted run's coordinator: its node hosts and secret come on stdin ({@link HostedStart}). */
    @Option(names = "--hosted", hidden = true)
    boolean hosted;

    @Mixin
    JobOptions options;

    RunjobCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() throws Exception {
        if (file == null) {
            spec.commandLine().usage(io.err());
            return ExitCode.INVALID;
        }
        RankSelection selection = RankSelection.parse(ranks);
        List<String> original = new ArrayList<>(spec.commandLine().getParseResult().originalArgs());
        if (arrayTask) {
            ArrayTask task;
            try {
                task = ArrayTask.of(Path.of(file), io.env());
            } catch (IllegalArgumentException | IOException e) {
                io.err().println("runjob: " + e.getMessage());
                return ExitCode.INVALID;
            }
            // as the run's own coordinator would be started: its job file, run id and sweep point
            original.set(original.indexOf(file), task.job());
            original.remove("--array-task");
            file = task.job();
            runId = task.runId();
            options.sweepPoint = task.task();
        }
        if (options.sweepPoint == null && runId == null && !hosted) {
            SpecLoader.Loaded first = Jobs.load(io, file, options.sets, args);
            if (first == null) {
                return ExitCode.INVALID;
            }
            if (first.sweep().isPresent()) {
                if (maxParallel != null && maxParallel < 1) {
                    io.err().println("runjob: --max-parallel takes a number of runs of at least 1");
                    return ExitCode.INVALID;
                }
                return dryRun ? SweepRun.dryRun(io, file, options.sets, args, first)
                        : SweepRun.run(io, file, first, original, Optional.ofNullable(maxParallel), detach, waitForGpus.given());
            }
        }
        if (dryRun) {
            return PlanCommand.printPlan(io, file, options, args);
        }
        if (detach) {
            return Detach.start(io, file, options.sets, args, original);
        }
        List<String> recorded = new ArrayList<>(original);
        if (runId != null) {
            recorded.removeAll(List.of("--run-id", runId));
        }
        Optional<HostedRun> hostedRun = Optional.empty();
        if (hosted) {
            recorded.remove("--hosted");
            String line = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            try {
                hostedRun = Optional.of(HostedRun.parse(line == null ? "" : line));
            } catch (IllegalArgumentException e) {
                io.err().println("runjob: --hosted: " + e.getMessage());
                return ExitCode.INVALID;
            }
        }
        recorded.remove("--continue-requeued");
        return RunJob.run(io, new RunRequest(file, options.sets, args, options.point(), options.verbose, options.output == JobOptions.Output.json,
                selection, RunJob.command(recorded), Optional.ofNullable(runId), waitForGpus.duration(), hostedRun,
                continueRequeued && runId != null ? RunJob.CONTINUE : 0, forceSetup));
    }
}
