package org.runjob.run;

import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;

import org.runjob.node.Backend;
import org.runjob.node.Cluster;
import org.runjob.preflight.EnvironmentCheck;
import org.runjob.preflight.Preflight;
import org.runjob.protocol.EnvironmentRequest;
import org.runjob.session.NodeStarter;
import org.runjob.spec.JobSpec;

/**
 * Preflight as a command needs it: the job's files shipped for a run, nothing for {@code check};
 * the job's spares checked as its nodes are (they run nothing).
 */
public final class Launch {

    private Launch() {
    }

    /**
     * @param runId the run's id for a run (its agents take the workdir's run lock, receive the files and lease the GPUs); empty for check
     */
    public static Preflight.Outcome preflight(JobSpec spec, Backend backend, NodeStarter starter,
                                       Optional<String> runId, Optional<Duration> waitForGpus, PrintStream progress) {
        return preflight(spec, backend, starter, runId, waitForGpus, progress,
                runId.isPresent() ? EnvironmentRequest.Setup.WHEN_DUE : EnvironmentRequest.Setup.CHECK, EnvironmentCheck.SetupOutput.NONE, () -> false);
    }

    /**
     * The same, with each node's setup run as {@code setup} says, its lines going to
     * {@code setupOutput}, and the wait for it ended once {@code stop} says so (Ctrl-C).
     */
    public static Preflight.Outcome preflight(JobSpec spec, Backend backend, NodeStarter starter, Optional<String> runId,
                                              Optional<Duration> waitForGpus, PrintStream progress, EnvironmentRequest.Setup setup,
                                              EnvironmentCheck.SetupOutput setupOutput, BooleanSupplier stop) {
        List<JobSpec.ShippedFile> files = runId.isPresent() ? spec.files() : List.of();
        return new Preflight(spec.withSparesAsNodes(), backend, starter, runId, waitForGpus, setup, setupOutput, stop).run(files, spec.files(),
                progress::println);
    }

    /**
     * The job's nodes and spares as its backend reaches them: Slurm's waiting-in-the-queue lines go
     * to stderr, and Ctrl-C withdraws a waiting start.
     */
    public static Cluster open(Backend backend, JobSpec spec, Io io) {
        return backend.open(spec.withSparesAsNodes(), io.env(), line -> io.err().println("runjob: " + line), () -> io.interrupts().count() > 0);
    }
}
