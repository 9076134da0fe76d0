package org.runjob.cli;

/** The process exit codes; only the CLI layer maps outcomes to these. */
public final class ExitCode {
    public static final int OK = 0;
    public static final int WORKER_FAILED = 1;
    public static final int INVALID = 2;
    public static final int PREFLIGHT_FAILED = 3;
    public static final int INTERNAL = 4;
    public static final int INTERRUPTED = 130;


    private ExitCode() {
    }
}
