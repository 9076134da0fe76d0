package org.runjob.launch;

import java.nio.file.Path;
import java.util.List;

/** A whole run: its attempts (restarts included), the run folder, and how it ended. */
public record RunResult(String job, String runId, Path folder, List<AttemptResult> attempts) {

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
