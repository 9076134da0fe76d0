package org.runjob.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import org.runjob.run.Io;
import org.runjob.run.Owned;
import org.runjob.run.RunIndex;
import org.runjob.runs.RunRecords;

import picocli.CommandLine.Option;

/** Options of the commands that read run folders (runs, status, logs, stop). */
final class RunsOptions {

    static final Path DEFAULT_DIR = Path.of("runs");

    @Option(names = "--logs-dir", paramLabel = "DIR",
            description = "Only the runs under DIR (a job's logs.dir). Without it: ./runs and every run in your run index, from any directory.")
    Path logsDir;

    @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "text", description = "text or json (default: ${DEFAULT-VALUE}).")
    JobOptions.Output output = JobOptions.Output.text;

    /** A run found: its folder here, or a submitted run's entry in the run index. */
    sealed interface Found permits Here, Submitted {
    }

    record Here(RunRecords.Run run) implements Found {
    }

    record Submitted(RunIndex.Entry entry) implements Found {
    }

    Path dir() {
        return logsDir == null ? DEFAULT_DIR : logsDir;
    }

    /** The run {@code ref} names ({@link RunRecords#resolve}), or empty after saying why not on stderr. */
    Optional<RunRecords.Run> resolve(Io io, String ref) throws IOException {
        try {
            return Optional.of(RunRecords.resolve(dir(), ref, io.env()));
        } catch (IllegalArgumentException e) {
            io.err().println("runjob: " + e.getMessage());
            return Optional.empty();
        }
    }

    /**
     * The run {@code ref} names: under the logs dir first; without {@code --logs-dir} also in the
     * run index ({@code last}: the newest of both). Empty after saying why not on stderr.
     */
    Optional<Found> find(Io io, String ref) throws IOException {
        Optional<RunRecords.Run> here;
        String why;
        try {
            here = Optional.of(RunRecords.resolve(dir(), ref, io.env()));
            why = "";
        } catch (IllegalArgumentException e) {
            here = Optional.empty();
            why = e.getMessage();
        }
        List<RunIndex.Entry> index = RunIndex.list(io.env());
        if (logsDir != null) {
            if (here.isEmpty()) {
                // a submitted run's folder is on its master node, whatever logs dir its job named
                List<RunIndex.Entry> submitted = index.stream().filter(x -> x.isSubmitted() && !ref.equals("last")
                        && (x.runId().startsWith(ref) || (x.job() + "/" + x.runId()).startsWith(ref))).toList();
                if (submitted.size() == 1) {
                    return Optional.of(new Submitted(submitted.get(0)));
                }
                io.err().println("runjob: " + why);
            }
            return here.map(Here::new);
        }
        List<RunIndex.Entry> matches = ref.equals("last") ? (index.isEmpty() ? List.of() : List.of(index.get(index.size() - 1)))
                : index.stream().filter(x -> x.runId().startsWith(ref) || (x.job() + "/" + x.runId()).startsWith(ref)).toList();
        if (here.isPresent() && (!ref.equals("last") || matches.isEmpty() || matches.get(0).runId().compareTo(here.get().runId()) <= 0)) {
            return here.map(Here::new);
        }
        if (matches.size() == 1) {
            RunIndex.Entry e = matches.get(0);
            Optional<String> problem = e.isSubmitted() ? Optional.empty() : Owned.runFolder(Path.of(e.folder()));
            if (problem.isPresent()) {
                io.err().println("runjob: " + problem.get());
                return Optional.empty();
            }
            return Optional.of(e.isSubmitted() ? new Submitted(e) : new Here(RunRecords.read(Path.of(e.folder()), io.env())));
        }
        if (matches.isEmpty()) {
            io.err().println("runjob: " + (ref.equals("last") ? "no runs under " + dir() + " or in your run index" : why.isEmpty() ? e(ref) : why));
        } else {
            io.err().println("runjob: " + ref + " names " + matches.size() + " runs: "
                    + String.join(", ", matches.stream().map(x -> x.job() + "/" + x.runId()).toList()) + "; give more of the id, or JOB/ID");
        }
        return Optional.empty();
    }

    /**
     * Every run this machine has a folder of, oldest first: those under the logs dir and, without
     * {@code --logs-dir}, those in the run index (a submitted run's folder is on its node: not here).
     */
    List<RunRecords.Run> local(Io io) throws IOException {
        return RunRecords.everywhere(dir(), logsDir == null, io.env(), why -> io.err().println("runjob: note: left out: " + why));
    }

    private String e(String ref) {
        return "no run " + ref + " under " + dir() + " (runjob runs lists them)";
    }
}
