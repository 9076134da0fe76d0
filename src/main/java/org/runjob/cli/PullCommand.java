package org.runjob.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

import org.runjob.backends.Backends;
import org.runjob.json.Json;
import org.runjob.launch.NodeStarter;
import org.runjob.node.Backend;
import org.runjob.node.Cluster;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.Jobs;
import org.runjob.run.Launch;
import org.runjob.run.RunOutputs;
import org.runjob.spec.JobSpec;
import org.runjob.spec.SpecLoader;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code runjob pull RUN [PATH...]}: brings a run's outputs (its job's {@code outputs}, or the
 * PATHs, relative to the run's directory) from every node into its run folder's
 * {@code outputs/NODE/}, again: after the run, or while it runs (a checkpoint so far). Reaches the
 * nodes as the run did ({@link RunOutputs}). A submitted run's folder, and a Slurm run's nodes,
 * are not here: refused by name.
 */
@Command(name = "pull", mixinStandardHelpOptions = true,
        description = "Bring a run's outputs (or PATH..., relative to its directory on the nodes) from every node into its run folder's outputs/NODE/.")
final class PullCommand implements Callable<Integer> {

    private final Io io;

    @Parameters(index = "0", paramLabel = "RUN", description = "A run id, a unique prefix of one, last, or a run folder.")
    String run;

    @Parameters(index = "1..*", paramLabel = "PATH", description = "Paths relative to the run's directory on each node (default: the job's outputs).")
    List<String> paths = new ArrayList<>();

    @Mixin
    RunsOptions options;

    PullCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() throws Exception {
        var found = options.find(io, run);
        if (found.isEmpty()) {
            return ExitCode.INVALID;
        }
        if (found.get() instanceof RunsOptions.Submitted s) {
            io.err().println("runjob: run " + s.entry().runId() + " was submitted: its coordinator brought its outputs into the master"
                    + " node's run folder when it ended; runjob pull reaches runs whose folder is here");
            return ExitCode.INVALID;
        }
        var r = ((RunsOptions.Here) found.get()).run();
        Path job = r.folder().resolve("job.yaml");
        if (!Files.isRegularFile(job)) {
            io.err().println("runjob: run " + r.runId() + " never started (" + r.state() + "): it has no outputs");
            return ExitCode.INVALID;
        }
        SpecLoader.Loaded loaded = Jobs.load(io, job.toString(), List.of());
        if (loaded == null) {
            return ExitCode.INVALID;
        }
        JobSpec spec = loaded.spec();
        if (spec.slurm().isPresent()) {
            io.err().println("runjob: run " + r.runId() + " ran on Slurm: its nodes were its allocation's; a run's outputs come into its"
                    + " folder when it ends");
            return ExitCode.INVALID;
        }
        List<String> wanted = paths.isEmpty() ? spec.outputs() : paths;
        if (wanted.isEmpty()) {
            io.err().println("runjob: job " + spec.name() + " names no outputs: name the paths, e.g. runjob pull " + r.runId() + " checkpoints");
            return ExitCode.INVALID;
        }
        for (String p : wanted) {
            if (p.startsWith("/") || p.startsWith("~") || Path.of(p).normalize().startsWith("..") || Path.of(p).normalize().toString().isEmpty()) {
                io.err().println("runjob: '" + p + "' is not inside the run's directory: paths are relative to it, such as checkpoints");
                return ExitCode.INVALID;
            }
        }
        Backend backend = Backends.of(spec);
        ObjectNode result;
        try (Cluster cluster = Launch.open(backend, spec, io)) {
            result = RunOutputs.collect(spec, new NodeStarter(spec, cluster, io.env(), Optional.of(r.runId())), wanted, r.folder(), io.err());
        }
        if (options.output == JobOptions.Output.json) {
            io.out().println(Json.pretty(result));
        }
        boolean failed = false;
        for (var node : result.properties()) {
            failed |= node.getValue().has("error");
        }
        return failed ? ExitCode.PREFLIGHT_FAILED : ExitCode.OK;
    }
}
