package org.runjob.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

import picocli.CommandLine.Option;

/** Options of the commands that read run folders (runs, status, logs, stop). */
final class RunsOptions {

    @Option(names = "--logs-dir", paramLabel = "DIR", defaultValue = "runs",
            description = "Where the run folders are (a job's logs.dir; default: ${DEFAULT-VALUE}).")
    Path logsDir;

    @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "text", description = "text or json (default: ${DEFAULT-VALUE}).")
    JobOptions.Output output = JobOptions.Output.text;

    /** The run {@code ref} names ({@link RunRecords#resolve}), or empty after saying why not on stderr. */
    Optional<RunRecords.Run> resolve(Io io, String ref) throws IOException {
        try {
            return Optional.of(RunRecords.resolve(logsDir, ref));
        } catch (IllegalArgumentException e) {
            io.err().println("runjob: " + e.getMessage());
            return Optional.empty();
        }
    }
}
