package org.runjob.run;

/** The process exit codes; only the commands ({@code cli}) and the run they start ({@code run}) map outcomes to these. */
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
