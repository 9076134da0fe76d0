package org.runjob.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.time.ZoneId;

import org.junit.jupiter.api.Test;

class TimeLimitWatchTest {

    static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    @Test
    void theRunStopsItsMarginAheadOfTheJobsEndInThisMachinesZone() {
        String job = "JobId=12 JobState=RUNNING TimeLimit=00:10:00 StartTime=2026-12-02T10:00:00 EndTime=2026-12-02T10:10:00 Deadline=N/A\n";
        assertThat(TimeLimitWatch.stopAt(job, 90, BERLIN)).contains(Instant.parse("2026-12-02T09:08:30Z"));
    }

    @Test
    void aJobWithoutALimitOrAnEndIsNotWatched() {
        assertThat(TimeLimitWatch.stopAt("JobId=12 TimeLimit=UNLIMITED EndTime=2027-12-02T10:00:00\n", 90, BERLIN)).isEmpty();
        assertThat(TimeLimitWatch.stopAt("JobId=12 TimeLimit=00:10:00 EndTime=Unknown\n", 90, BERLIN)).isEmpty();
        assertThat(TimeLimitWatch.stopAt("slurm_load_jobs error: Invalid job id specified\n", 90, BERLIN)).isEmpty();
    }
}
