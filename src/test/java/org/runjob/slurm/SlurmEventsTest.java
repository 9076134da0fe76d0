package org.runjob.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

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
}
