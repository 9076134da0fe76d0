package org.runjob.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;

import org.runjob.backends.Backends;
import org.runjob.json.Json;
import org.runjob.node.Backend;
import org.runjob.node.Cluster;
import org.runjob.protocol.Outputs;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.Jobs;
import org.runjob.run.Launch;
import org.runjob.run.OutputsStream;
import org.runjob.run.RunIndex;
import org.runjob.run.RunOutputs;
import org.runjob.runs.LastNodes;
import org.runjob.runs.Remote;
import org.runjob.runs.RunRecords;
import org.runjob.session.NodeStarter;
import org.runjob.spec.JobSpec;
import org.runjob.spec.SpecLoader;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code runjob pull RUN [PATH...] [--into DIR]}: brings a run's outputs (its job's
 * {@code outputs}, or the PATHs, relative to the run's directory) from every node into its run
 * folder's {@code outputs/NODE/} (or {@code DIR/NODE/}), again: after the run, or while it runs (a
 * checkpoint so far). Reaches the nodes as the run's last attempt did ({@link RunOutputs}): a spare that stood in for a
 * node gives the outputs of that node's place ({@link LastNodes}). A submitted run: its
 * master node's runjob sends what its coordinator brought into the run folder there when the run
 * ended ({@link OutputsStream}), into {@code DIR} (default {@code ./RUN-outputs}). A Slurm run's
 * nodes were its allocation's: refused by name.
 */
@Command(name = "pull", mixinStandardHelpOptions = true,
        description = {"Bring a run's outputs (or PATH..., relative to its directory on the nodes) from every node into its run folder's "
                + "outputs/NODE/, or into DIR/NODE/.", "A submitted run's outputs come from its master node into DIR (default ./RUN-outputs)."})
final class PullCommand implements Callable<Integer> {

    private final Io io;

    @Parameters(index = "0", paramLabel = "RUN", description = "A run id, a unique prefix of one, last, or a run folder.")
    String run;

    @Parameters(index = "1..*", paramLabel = "PATH", description = "Paths relative to the run's directory on each node (default: the job's outputs).")
    List<String> paths = new ArrayList<>();

    @Option(names = "--into", paramLabel = "DIR", description = "Put NODE/PATH under DIR instead of the run folder's outputs/.")
    Path into;

    /** Set by the launcher on a submitted run's master node: the outputs go to stdout as one stream. */
    @Option(names = "--send", hidden = true)
    boolean send;

    @Mixin
    RunsOptions options;

    @Spec
    CommandSpec spec;

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
            return fromMaster(s.entry());
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
        // each rank's outputs are on the node that ran it last: a spare that stood in has those of its place
        JobSpec spec = LastNodes.of(loaded.spec(), r.folder());
        if (!Backends.of(spec).nodesOutlastRun()) {
            io.err().println("runjob: run " + r.runId() + " ran on backend " + spec.backend().name() + ", whose nodes were held only while"
                    + " it ran; a run's outputs come into its folder when it ends");
            return ExitCode.INVALID;
        }
        List<String> wanted = paths.isEmpty() ? spec.outputs() : paths;
        if (wanted.isEmpty()) {
            io.err().println("runjob: job " + spec.name() + " names no outputs: name the paths, e.g. runjob pull " + r.runId() + " checkpoints");
            return ExitCode.INVALID;
        }
        if (!relative(wanted)) {
            return ExitCode.INVALID;
        }
        if (send) {
            return send(r, spec, wanted);
        }
        Path outputs = into == null ? r.folder().resolve("outputs") : into;
        Backend backend = Backends.of(spec);
        ObjectNode result;
        try (Cluster cluster = Launch.open(backend, spec, io)) {
            result = RunOutputs.collect(spec, new NodeStarter(spec, cluster, io.env(), Optional.of(r.runId())), wanted, outputs, io.err());
        }
        if (options.output == JobOptions.Output.json) {
            io.out().println(Json.pretty(result));
        }
        boolean failed = false;
        long files = 0;
        for (var node : result.properties()) {
            failed |= node.getValue().has("error");
            files += node.getValue().path("files").asLong(0);
        }
        if (failed) {
            return ExitCode.PREFLIGHT_FAILED;
        }
        if (files == 0) {
            io.err().println("runjob: nothing to pull: no node of run " + r.runId() + " has " + String.join(", ", wanted)
                    + " (paths are relative to the run's directory on each node)");
            return ExitCode.INVALID;
        }
        return ExitCode.OK;
    }

    /**
     * On a submitted run's master node: what its coordinator brought into the run folder when the
     * run ended, to stdout. The nodes are not reached again: the run's node hosts, its only way to
     * them from here, ended with it.
     */
    private int send(RunRecords.Run r, JobSpec spec, List<String> wanted) throws IOException {
        if (r.summary().isEmpty()) {
            io.err().println("runjob: run " + r.runId() + " is " + r.state() + ": its outputs come from every node into its folder when it"
                    + " ends; runjob pull brings them here then");
            return ExitCode.INVALID;
        }
        List<String> sent = new ArrayList<>();
        spec.nodes().forEach(n -> wanted.forEach(p -> sent.add(n.name() + "/" + p)));
        Outputs.Manifest m = OutputsStream.send(r.folder().resolve("outputs"), sent, io.out());
        // "NODE/PATH: why" as "node NODE: PATH: why"
        m.skipped().forEach(s -> io.err().println("runjob: outputs of node " + s.replaceFirst("/", ": ")));
        return ExitCode.OK;
    }

    private boolean relative(List<String> wanted) {
        for (String p : wanted) {
            if (p.startsWith("/") || p.startsWith("~") || Path.of(p).normalize().startsWith("..") || Path.of(p).normalize().toString().isEmpty()) {
                io.err().println("runjob: '" + p + "' is not inside the run's directory: paths are relative to it, such as checkpoints");
                return false;
            }
        }
        return true;
    }

    /** A submitted run: {@code pull RUN [PATH...] --send} on its master node, into {@code into}. */
    private int fromMaster(RunIndex.Entry entry) throws IOException {
        if (!relative(paths)) {
            return ExitCode.INVALID;
        }
        Path dir = into != null ? into : Path.of(entry.runId() + "-outputs");
        List<String> remote = new ArrayList<>(Forward.argv(spec, entry.runId(), Set.of("--into")));
        remote.add("--send");
        long t0 = System.nanoTime();
        Outputs.Manifest[] got = new Outputs.Manifest[1];
        String[] failed = new String[1];
        int code = Remote.call(io, entry, remote, in -> {
            try {
                got[0] = OutputsStream.receive(in, dir);
            } catch (IOException e) {
                failed[0] = e.getMessage();
            }
            // to the end of the command: its exit code comes last, on stderr
            in.transferTo(OutputStream.nullOutputStream());
        });
        if (got[0] == null) {
            if (code == ExitCode.OK || code == ExitCode.PREFLIGHT_FAILED) {
                io.err().println("runjob: the outputs of run " + entry.runId() + " did not come from its master node " + entry.node().orElse("")
                        + (failed[0] == null ? "" : ": " + failed[0]));
                return ExitCode.PREFLIGHT_FAILED;
            }
            return code;
        }
        long files = got[0].files().stream().filter(f -> f.size() >= 0).count();
        long bytes = got[0].files().stream().mapToLong(f -> Math.max(0, f.size())).sum();
        io.err().printf("runjob: %d file%s (%d B) from master node %s in %.1f s: %s%n", files, files == 1 ? "" : "s", bytes,
                entry.node().orElse(""), (System.nanoTime() - t0) / 1e9, dir.toAbsolutePath().normalize());
        return code;
    }
}
