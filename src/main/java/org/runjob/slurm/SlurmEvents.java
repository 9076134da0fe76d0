package org.runjob.slurm;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.runjob.node.SchedulerStop;

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

    /** The reasons with which Slurm says a job lost a node. */
    private static final Set<String> NODE_REASONS = Set.of("NodeDown", "NodeFail");

    private static final Pattern EXIT = Pattern.compile("\\bExitCode=(\\S+)");
    private static final Pattern BATCH_HOST = Pattern.compile("\\bBatchHost=(\\S+)");

    private static final Pattern RESTARTS = Pattern.compile("\\bRestarts=(\\d+)");
    private static final Pattern NODE_LIST = Pattern.compile("\\bNodeList=(\\S+)");
    private static final Pattern EXCLUDED = Pattern.compile("\\bExcNodeList=(\\S+)");

    /** How long a job that reads COMPLETING is given to show the state it ends in. */
    static final long SETTLE_S = 30;

    private SlurmEvents() {
    }

    /** True while the job reads RUNNING: no cancel, requeue, preemption or time limit has touched it. */
    static boolean running(String scontrol) {
        Matcher state = STATE.matcher(scontrol);
        return state.find() && state.group(1).equals("RUNNING");
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

    /** The job's restart count ({@code Restarts=}); 0 when the record does not say. */
    static int restarts(String scontrol) {
        Matcher m = RESTARTS.matcher(scontrol);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    /** The nodes the job holds now ({@code NodeList=}, a Slurm host list); empty when it holds none. */
    static Optional<String> nodeList(String scontrol) {
        Matcher m = NODE_LIST.matcher(scontrol);
        return m.find() && !m.group(1).equals("(null)") ? Optional.of(m.group(1)) : Optional.empty();
    }

    /** The nodes the job is kept off ({@code ExcNodeList=}, a Slurm host list); empty when none. */
    static Optional<String> excluded(String scontrol) {
        Matcher m = EXCLUDED.matcher(scontrol);
        return m.find() && !m.group(1).equals("(null)") ? Optional.of(m.group(1)) : Optional.empty();
    }

    /**
     * Why Slurm is ending the batch step runjob runs as, read from the job's record while the step
     * still runs (SIGTERM came): a restart count above {@code ownRestarts} (the one this start was
     * given) is a requeue. Nodes of {@code held} (this start's allocation) missing from {@code now}
     * (the nodes the record still holds) were lost only when Slurm says a node failed: the job was
     * requeued, reads NODE_FAIL, or gives NodeDown or NodeFail as its reason (Slurm takes a failed
     * node out of a job at once). A cancelled job drops its nodes from the list too, one by one
     * as their steps end while it reads COMPLETING: that is no node's failure. Otherwise the job's
     * end state, when the record shows one; empty when it says nothing more than COMPLETING.
     */
    static Optional<SchedulerStop> stop(String jobId, String scontrol, int ownRestarts, List<String> held, List<String> now) {
        int restarts = restarts(scontrol);
        boolean requeued = restarts > ownRestarts;
        Matcher stateNow = STATE.matcher(scontrol);
        Matcher reasonNow = REASON.matcher(scontrol);
        boolean nodeFailed = requeued || (stateNow.find() && stateNow.group(1).equals("NODE_FAIL"))
                || (reasonNow.find() && NODE_REASONS.contains(reasonNow.group(1)));
        List<String> lost = now.isEmpty() || !nodeFailed ? List.of() : held.stream().filter(n -> !now.contains(n)).toList();
        String again = requeued ? " and requeued it (restart " + restarts + ")" : "";
        if (!lost.isEmpty()) {
            return Optional.of(new SchedulerStop("Slurm job " + jobId + " lost node" + (lost.size() == 1 ? " " : "s ") + String.join(", ", lost)
                    + " (node failure)" + again, requeued, lost.stream().map(n -> SlurmAddress.MACHINE_PREFIX + n).toList()));
        }
        if (requeued) {
            Matcher preempted = STATE.matcher(scontrol);
            Matcher why = REASON.matcher(scontrol);
            if ((preempted.find() && preempted.group(1).equals("PREEMPTED")) || (why.find() && why.group(1).startsWith("Preempt"))) {
                return Optional.of(new SchedulerStop("Slurm preempted job " + jobId + " and requeued it (restart " + restarts + ")", true,
                        List.of()));
            }
            return Optional.of(new SchedulerStop("Slurm requeued job " + jobId + " (restart " + restarts
                    + ": preemption or scontrol requeue)", true, List.of()));
        }
        Matcher state = STATE.matcher(scontrol);
        if (state.find() && !state.group(1).equals("COMPLETING") && ENDED.containsKey(state.group(1))) {
            return gone(jobId, scontrol).map(g -> new SchedulerStop(g, false, List.of()));
        }
        return Optional.empty();
    }

    /**
     * Why Slurm ends a job whose record still reads COMPLETING, with no sign of a failed node and
     * no requeue, once it was asked long enough: its batch step (runjob) still runs, so the record
     * cannot show CANCELLED yet, and nothing else ends a job that way (a time limit, a failed node
     * or a preemption say so). Empty for any other record.
     */
    static Optional<SchedulerStop> stillEnding(String jobId, String scontrol) {
        if (!ending(scontrol)) {
            return Optional.empty();
        }
        Matcher reason = REASON.matcher(scontrol);
        if (reason.find() && !reason.group(1).equals("None")) {
            return Optional.of(new SchedulerStop("Slurm job " + jobId + " is ending (COMPLETING, reason " + reason.group(1) + ")", false, List.of()));
        }
        return Optional.of(new SchedulerStop("Slurm job " + jobId + " was cancelled from outside runjob (scancel) (COMPLETING: no node failed,"
                + " no requeue)", false, List.of()));
    }

    private static final Pattern START = Pattern.compile("\\bStartTime=(\\S+)");
    private static final Set<String> RUNNING = Set.of("RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "RESIZING",
            "SIGNALING", "STAGE_OUT");
    private static final Set<String> REQUEUEING = Set.of("REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "SPECIAL_EXIT");

    /**
     * Where a queued job stands, on one line, from its record (the first line: a heterogeneous
     * job's first component): {@code queued (REASON)} while it waits, {@code requeued (until TIME)}
     * in Slurm's hold after a requeue (a restart count and reason BeginTime; {@code requeued (REASON)}
     * for another reason, {@code requeued} while Slurm requeues it), {@code running} while it runs
     * or ends; empty once it has ended or Slurm does not know it.
     */
    static Optional<String> queueState(String scontrol) {
        String first = scontrol.lines().findFirst().orElse("");
        Matcher state = STATE.matcher(first);
        if (!state.find()) {
            return Optional.empty();
        }
        String s = state.group(1);
        if (RUNNING.contains(s)) {
            return Optional.of("running");
        }
        if (REQUEUEING.contains(s)) {
            return Optional.of("requeued");
        }
        if (!s.equals("PENDING")) {
            return Optional.empty();
        }
        Matcher reason = REASON.matcher(first);
        String why = reason.find() ? reason.group(1) : "None";
        // Reason=None: pending, and the scheduler has not looked at it yet
        String because = why.equals("None") ? "" : " (" + why + ")";
        if (restarts(first) == 0) {
            return Optional.of("queued" + because);
        }
        Matcher start = START.matcher(first);
        return Optional.of(why.equals("BeginTime") && start.find() && !start.group(1).equals("Unknown")
                ? "requeued (until " + start.group(1) + ")" : "requeued" + because);
    }
}
