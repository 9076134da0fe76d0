package org.runjob.cli;

import java.util.ArrayList;
import java.util.List;

import picocli.CommandLine.Option;

/** Options every command that reads a job file takes. */
final class JobOptions {

    @Option(names = "--set", paramLabel = "PATH=VALUE",
            description = "Override a job-file value before validation, e.g. --set nodes[1].gpus=[0,1] (YAML flow syntax; repeatable).")
    List<String> sets = new ArrayList<>();

    @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "text",
            description = "text or json (default: ${DEFAULT-VALUE}).")
    Output output = Output.text;

    @Option(names = "--verbose", description = "Show diagnostics and stack traces on stderr.")
    boolean verbose;

    /** The point of the job's sweep this command is about: a sweep's runjob gives each run of it its own. */
    @Option(names = "--sweep-point", hidden = true)
    Integer sweepPoint;

    int point() {
        return sweepPoint == null ? 0 : sweepPoint;
    }

    enum Output { text, json }
}
