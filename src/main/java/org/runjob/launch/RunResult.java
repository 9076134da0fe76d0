package org.runjob.launch;

import java.nio.file.Path;
import java.util.List;

/** A whole run: its attempts (restarts included), the run folder, how it ended, and its goodput ({@link Recovery#goodput}). */
public record RunResult(String job, String runId, Path folder, List<AttemptResult> attempts, Recovery.Goodput goodput) {

    public RunResult {
        attempts = List.copyOf(attempts);
    }

    public AttemptResult last() {
        return attempts.get(attempts.size() - 1);
    }

    /** The last attempt's {@link AttemptResult#verdict}. */
    public String verdict() {
        return last().verdict();
    }

    public boolean succeeded() {
        return last().succeeded();
    }

    public boolean interrupted() {
        return last().interrupted();
    }
}
