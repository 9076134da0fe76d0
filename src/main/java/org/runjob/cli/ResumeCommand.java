package org.runjob.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;

import org.runjob.logs.RunFolder;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.RankSelection;
import org.runjob.run.RunJob;
import org.runjob.run.RunRequest;
import org.runjob.run.RunState;
import org.runjob.run.RunStatus;
import org.runjob.runs.RunRecords;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/**
 * {@code runjob resume RUN}: a run that ended goes on as its next attempt, with the same run id,
 * in the same directory on every node (so its script finds its snapshot there) and the same run
 * folder. It runs the folder's {@code job.yaml}, the job as it ran (its arguments included);
 * the earlier attempts' {@code summary.json} is kept as {@code summary.until-attempt-N.json}.
 * A run that still runs, a submitted run and a run that never started are refused by name; a
 * resume refused before its attempt ran (preflight) leaves the run's records as they were.
 */
@Command(name = "resume", mixinStandardHelpOptions = true,
        description = "Continue a run that ended as its next attempt: same run id, same directory on every node (its snapshot is there), same run folder.")
final class ResumeCommand implements Callable<Integer> {

    private final Io io;

    @Parameters(index = "0", paramLabel = "RUN", description = "A run id, a unique prefix of one, last, or a run folder.")
    String run;

    @Mixin
    GpuWaitOption waitForGpus;

    @Mixin
    RunsOptions options;

    ResumeCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() throws IOException {
        var found = options.find(io, run);
        if (found.isEmpty()) {
            return ExitCode.INVALID;
        }
        if (found.get() instanceof RunsOptions.Submitted s) {
            io.err().println("runjob: run " + s.entry().runId() + " was submitted: its coordinator's node holds it; runjob resume"
                    + " continues runs that ran here");
            return ExitCode.INVALID;
        }
        RunRecords.Run r = ((RunsOptions.Here) found.get()).run();
        if (r.live()) {
            io.err().println("runjob: run " + r.runId() + " is " + r.state() + ": stop it first (runjob stop " + r.runId()
                    + "), or follow it (runjob logs -f " + r.runId() + ")");
            return ExitCode.INVALID;
        }
        Path job = r.folder().resolve("job.yaml");
        if (!Files.isRegularFile(job) || r.state().equals(RunState.PREFLIGHT_FAILED.label())) {
            io.err().println("runjob: run " + r.runId() + " never started (" + r.state() + "): there is nothing to resume; run its job again");
            return ExitCode.INVALID;
        }
        Path summary = r.folder().resolve(RunFolder.SUMMARY);
        Path status = r.folder().resolve(RunFolder.STATUS);
        Optional<byte[]> statusBefore = Files.isRegularFile(status) ? Optional.of(Files.readAllBytes(status)) : Optional.empty();
        int next = RunStatus.nextAttempt(r.folder()).orElse(1);
        io.err().println("runjob: resuming run " + r.runId() + " of job " + r.job() + " as attempt " + next);
        // the run folder stays where it is, whatever the current directory
        List<String> sets = List.of("logs.dir=" + r.folder().getParent().getParent().toAbsolutePath());
        List<String> command = List.of("runjob", "resume", r.runId());
        int code = RunJob.run(io, new RunRequest(job.toString(), sets, List.of(), 0, false, options.output == JobOptions.Output.json,
                new RankSelection(Set.of()), command, Optional.of(r.runId()), waitForGpus.duration(), Optional.empty(), next));
        Path kept = r.folder().resolve("summary.until-attempt-" + (next - 1) + ".json");
        if (!Files.exists(summary, LinkOption.NOFOLLOW_LINKS) && Files.isRegularFile(kept, LinkOption.NOFOLLOW_LINKS)) {
            // refused before any attempt ran: the run reads as it did
            Files.move(kept, summary);
            if (statusBefore.isPresent()) {
                Files.write(status, statusBefore.get());
            }
            io.err().println("runjob: run " + r.runId() + " was not resumed: it reads as before");
        }
        return code;
    }
}
