package org.runjob.slurm;

import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Slurm's own word for how a job ended, read from {@code scontrol -o show job ID}: a cancel from
 * outside, the time limit, preemption and a failed node each get their reason, so a run whose
 * allocation is gone says why instead of "node lost", and is not restarted into it.
 */
final class SlurmEvents {

    private static final Pattern STATE = Pattern.compile("\\bJobState=(\\S+)");
    private static final Pattern REASON = Pattern.compile("\\bReason=(\\S+)");
    private static final Map<String, String> ENDED = Map.of(
            "CANCELLED", "was cancelled from outside runjob (scancel)",
            "TIMEOUT", "reached its time limit",
            "PREEMPTED", "was preempted",
            "NODE_FAIL", "lost a node (NODE_FAIL)",
            "BOOT_FAIL", "could not boot a node (BOOT_FAIL)",
            "DEADLINE", "reached its deadline",
            "OUT_OF_MEMORY", "ran out of memory (OUT_OF_MEMORY)",
            "FAILED", "failed");

    private static final Pattern EXIT = Pattern.compile("\\bExitCode=(\\S+)");
    private static final Pattern BATCH_HOST = Pattern.compile("\\bBatchHost=(\\S+)");

    /** How long a job that reads COMPLETING is given to show the state it ends in. */
    static final long SETTLE_S = 30;

    private SlurmEvents() {
    }

    /** True while the job reads COMPLETING: its steps are being ended, its final state is still to come. */
    static boolean ending(String scontrol) {
        Matcher state = STATE.matcher(scontrol);
        return state.find() && state.group(1).equals("COMPLETING");
    }

    /** "Slurm job 12 was cancelled (...)" when the job has ended or is ending; empty while it runs, or when scontrol cannot say. */
    static Optional<String> gone(String jobId, String scontrol) {
        Matcher state = STATE.matcher(scontrol);
        if (!state.find()) {
            return scontrol.contains("Invalid job id") ? Optional.of("Slurm job " + jobId + " is gone (slurmctld no longer knows it)") : Optional.empty();
        }
        if (state.group(1).equals("COMPLETING")) {
            return Optional.of("Slurm job " + jobId + " is ending (COMPLETING)");
        }
        String what = ENDED.get(state.group(1));
        if (what == null) {
            return Optional.empty();
        }
        Matcher reason = REASON.matcher(scontrol);
        String why = reason.find() && !reason.group(1).equals("None") ? ", reason " + reason.group(1) : "";
        return Optional.of("Slurm job " + jobId + " " + what + " (" + state.group(1) + why + ")");
    }

    /**
     * Why a submitted job ended before the runjob of its batch step started (it wrote no status),
     * from its record: empty while it is queued or runs, when it was cancelled (withdrawn), or when
     * slurmctld no longer knows it. A batch step that fails at once on its node is most often one
     * whose output file, in the run folder, cannot be made there: the folder is not on a filesystem
     * the node shares, so the message says so.
     */
    static Optional<String> unstarted(String jobId, String scontrol) {
        Matcher state = STATE.matcher(scontrol);
        if (!state.find() || state.group(1).equals("CANCELLED") || !ENDED.containsKey(state.group(1))) {
            return Optional.empty();
        }
        Matcher exit = EXIT.matcher(scontrol);
        Matcher host = BATCH_HOST.matcher(scontrol);
        String node = host.find() && !host.group(1).equals("(null)") ? host.group(1) : null;
        String what = "Slurm job " + jobId + " " + ENDED.get(state.group(1)) + (node == null ? "" : " on " + node)
                + " before runjob started (" + state.group(1) + (exit.find() ? ", exit code " + exit.group(1) : "") + ")";
        if (state.group(1).equals("FAILED") && node != null) {
            what += ": is the run folder on a filesystem " + node + " shares? Slurm writes the job's output there";
        }
        return Optional.of(what);
    }
}
