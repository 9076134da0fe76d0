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
}
