package org.runjob.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.runjob.node.SchedulerStop;

class SlurmEventsTest {

    static String job(String state, String reason) {
        return "JobId=12 JobName=runjob-x UserId=me(1000) JobState=" + state + " Reason=" + reason + " Dependency=(null) TimeLimit=01:00:00\n";
    }

    @Test
    void eachEndOfAJobHasItsOwnWords() {
        assertThat(SlurmEvents.gone("12", job("CANCELLED", "None"))).contains("Slurm job 12 was cancelled from outside runjob (scancel) (CANCELLED)");
        assertThat(SlurmEvents.gone("12", job("TIMEOUT", "TimeLimit"))).contains("Slurm job 12 reached its time limit (TIMEOUT, reason TimeLimit)");
        assertThat(SlurmEvents.gone("12", job("PREEMPTED", "None"))).contains("Slurm job 12 was preempted (PREEMPTED)");
        assertThat(SlurmEvents.gone("12", job("NODE_FAIL", "NodeDown"))).contains("Slurm job 12 lost a node (NODE_FAIL) (NODE_FAIL, reason NodeDown)");
        assertThat(SlurmEvents.gone("12", "slurm_load_jobs error: Invalid job id specified\n")).contains("Slurm job 12 is gone (slurmctld no longer knows it)");
        assertThat(SlurmEvents.gone("12", job("COMPLETING", "None"))).contains("Slurm job 12 is ending (COMPLETING)");
        assertThat(SlurmEvents.ending(job("COMPLETING", "None"))).isTrue();
        assertThat(SlurmEvents.ending(job("CANCELLED", "None"))).isFalse();
    }

    @Test
    void aRunningJobOrNoAnswerIsNotGone() {
        assertThat(SlurmEvents.gone("12", job("RUNNING", "None"))).isEmpty();
        assertThat(SlurmEvents.gone("12", "")).isEmpty();
    }

    @Test
    void aSubmittedJobThatFailedOnItsNodeBeforeRunjobStartedPointsAtTheRunFolder() {
        String failed = job("FAILED", "RaisedSignal:53").trim() + " ExitCode=0:53 BatchHost=gpu07\n";
        assertThat(SlurmEvents.unstarted("12", failed)).contains("Slurm job 12 failed on gpu07 before runjob started (FAILED, exit code 0:53):"
                + " is the run folder on a filesystem gpu07 shares? Slurm writes the job's output there");
        assertThat(SlurmEvents.unstarted("12", job("NODE_FAIL", "NodeDown").trim() + " BatchHost=gpu07\n"))
                .contains("Slurm job 12 lost a node (NODE_FAIL) on gpu07 before runjob started (NODE_FAIL)");
        assertThat(SlurmEvents.unstarted("12", job("CANCELLED", "None"))).as("withdrawn").isEmpty();
        assertThat(SlurmEvents.unstarted("12", job("PENDING", "Resources"))).isEmpty();
        assertThat(SlurmEvents.unstarted("12", "slurm_load_jobs error: Invalid job id specified\n")).isEmpty();
    }

    /** The record of a batch job being ended, as scontrol showed it while its batch step had SIGTERM. */
    static String ending(int restarts, String nodes, String excluded) {
        return "JobId=12 JobName=runjob-x JobState=COMPLETING Reason=None Requeue=1 Restarts=" + restarts + " ReqNodeList=(null) ExcNodeList="
                + excluded + " NodeList=" + nodes + " BatchHost=h1\n";
    }

    @Test
    void aBatchStepBeingEndedIsToldARequeueANodeFailureAndACancelApart() {
        List<String> held = List.of("h1", "h2");
        // a node failure with --requeue: the failed node is gone from NodeList at once, Restarts counts up
        assertThat(SlurmEvents.stop("12", ending(1, "h1", "(null)"), 0, held, List.of("h1")))
                .contains(new SchedulerStop("Slurm job 12 lost node h2 (node failure) and requeued it (restart 1)", true, List.of("slurm:h2")));
        assertThat(SlurmEvents.stop("12", ending(3, "h1", "(null)"), 2, held, List.of("h1")).orElseThrow().why())
                .isEqualTo("Slurm job 12 lost node h2 (node failure) and requeued it (restart 3)");
        // scontrol requeue or preemption: every node still there
        assertThat(SlurmEvents.stop("12", ending(1, "h[1-2]", "(null)"), 0, held, held))
                .contains(new SchedulerStop("Slurm requeued job 12 (restart 1: preemption or scontrol requeue)", true, List.of()));
        // preemption, when the record says so: named as such
        assertThat(SlurmEvents.stop("12", ending(1, "h[1-2]", "(null)").replace("JobState=COMPLETING", "JobState=PREEMPTED"), 0, held, held))
                .contains(new SchedulerStop("Slurm preempted job 12 and requeued it (restart 1)", true, List.of()));
        // a cancel, once the record shows it; COMPLETING alone says nothing yet
        assertThat(SlurmEvents.stop("12", job("CANCELLED", "None"), 0, held, List.of()))
                .contains(new SchedulerStop("Slurm job 12 was cancelled from outside runjob (scancel) (CANCELLED)", false, List.of()));
        assertThat(SlurmEvents.stop("12", ending(0, "h[1-2]", "(null)"), 0, held, held)).isEmpty();
        // a cancel while the job reads COMPLETING: h2's step ended first, so h2 left NodeList; no node failed
        assertThat(SlurmEvents.stop("12", ending(0, "h1", "(null)"), 0, held, List.of("h1"))).isEmpty();
        assertThat(SlurmEvents.stop("12", ending(0, "h1", "(null)").replace("COMPLETING", "CANCELLED"), 0, held, List.of("h1")))
                .contains(new SchedulerStop("Slurm job 12 was cancelled from outside runjob (scancel) (CANCELLED)", false, List.of()));
        // still COMPLETING once asked long enough, with nothing else said: a cancel whose batch step still runs
        assertThat(SlurmEvents.stillEnding("12", ending(0, "h1", "(null)"))).contains(new SchedulerStop("Slurm job 12 was cancelled from"
                + " outside runjob (scancel) (COMPLETING: no node failed, no requeue)", false, List.of()));
        assertThat(SlurmEvents.stillEnding("12", ending(0, "h1", "(null)").replace("Reason=None", "Reason=TimeLimit")))
                .contains(new SchedulerStop("Slurm job 12 is ending (COMPLETING, reason TimeLimit)", false, List.of()));
        assertThat(SlurmEvents.stillEnding("12", job("RUNNING", "None"))).isEmpty();
        // Slurm's own word that a node failed, without a requeue
        assertThat(SlurmEvents.stop("12", ending(0, "h1", "(null)").replace("Reason=None", "Reason=NodeDown"), 0, held, List.of("h1")))
                .contains(new SchedulerStop("Slurm job 12 lost node h2 (node failure)", false, List.of("slurm:h2")));
        assertThat(SlurmEvents.stop("12", ending(0, "h1", "(null)").replace("COMPLETING", "NODE_FAIL"), 0, held, List.of("h1")))
                .contains(new SchedulerStop("Slurm job 12 lost node h2 (node failure)", false, List.of("slurm:h2")));
        // the record's fields, as the cluster reads them
        assertThat(SlurmEvents.restarts(ending(4, "h1", "(null)"))).isEqualTo(4);
        assertThat(SlurmEvents.nodeList(ending(0, "h[1-2]", "h3"))).contains("h[1-2]");
        assertThat(SlurmEvents.nodeList(ending(0, "(null)", "h3"))).isEmpty();
        assertThat(SlurmEvents.excluded(ending(0, "h1", "h[3-4]"))).contains("h[3-4]");
        assertThat(SlurmEvents.excluded(ending(0, "h1", "(null)"))).isEmpty();
    }

    @Test
    void aQueuedJobStandsOnOneLineRequeuedOnesIncluded() {
        String hold = "JobId=12 JobName=runjob-x JobState=PENDING Reason=BeginTime Requeue=1 Restarts=1 StartTime=2026-12-06T19:21:38 NodeList=\n";
        assertThat(SlurmEvents.queueState(hold)).contains("requeued (until 2026-12-06T19:21:38)");
        assertThat(SlurmEvents.queueState(hold.replace("BeginTime", "Resources"))).contains("requeued (Resources)");
        assertThat(SlurmEvents.queueState(hold.replace("Restarts=1", "Restarts=0").replace("BeginTime", "Priority"))).contains("queued (Priority)");
        // a heterogeneous job: one record line per component, the first one speaks for it
        assertThat(SlurmEvents.queueState(job("PENDING", "Dependency") + job("PENDING", "Dependency").replace("JobId=12", "JobId=13")))
                .contains("queued (Dependency)");
        // Reason=None: the scheduler has not looked at it yet, and says no more
        assertThat(SlurmEvents.queueState(hold.replace("BeginTime", "None"))).contains("requeued");
        assertThat(SlurmEvents.queueState(job("PENDING", "None"))).contains("queued");
        assertThat(SlurmEvents.queueState(job("RUNNING", "None"))).contains("running");
        assertThat(SlurmEvents.queueState(job("COMPLETING", "None"))).contains("running");
        assertThat(SlurmEvents.queueState(job("REQUEUED", "None"))).contains("requeued");
        assertThat(SlurmEvents.queueState(job("COMPLETED", "None"))).isEmpty();
        assertThat(SlurmEvents.queueState(job("CANCELLED", "None"))).isEmpty();
        assertThat(SlurmEvents.queueState("slurm_load_jobs error: Invalid job id specified\n")).isEmpty();
        assertThat(SlurmEvents.queueState("")).isEmpty();
    }
}
