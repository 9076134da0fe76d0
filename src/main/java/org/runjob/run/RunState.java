package org.runjob.run;

import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;

import org.runjob.launch.RunResult;

/**
 * The states a run's coordinator writes into {@code status.json}, from preflight to its end, in
 * the words that file holds ({@link #label}). Readers ({@code runjob runs}, {@code status}) also
 * show states no coordinator writes: a queued job's, "dead", "withdrawn".
 */
public enum RunState {
    PREFLIGHT("preflight"),
    PREFLIGHT_FAILED("preflight failed"),
    RUNNING("running"),
    STOPPING("stopping"),
    SUCCEEDED("succeeded"),
    FAILED("failed"),
    INTERRUPTED("interrupted");

    /** The labels of the states a run reaches once its workers have started. */
    public static final Set<String> LAUNCHED = EnumSet.of(RUNNING, STOPPING, SUCCEEDED, FAILED, INTERRUPTED).stream()
            .map(RunState::label).collect(Collectors.toUnmodifiableSet());

    private final String label;

    RunState(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    /** How a run that launched ended: its last attempt's verdict. */
    static RunState ended(RunResult result) {
        return result.succeeded() ? SUCCEEDED : result.interrupted() ? INTERRUPTED : FAILED;
    }

    /** The exit code of a launched run that ended in this state ({@link #ended}). */
    int exitCode() {
        return switch (this) {
            case SUCCEEDED -> ExitCode.OK;
            case INTERRUPTED -> ExitCode.INTERRUPTED;
            default -> ExitCode.WORKER_FAILED;
        };
    }
}
