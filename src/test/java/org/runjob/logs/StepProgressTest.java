package org.runjob.logs;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;

import org.junit.jupiter.api.Test;

/** Useful training time from step marks: steps a restart repeats from a checkpoint count nothing. */
class StepProgressTest {

    private static final Instant T0 = Instant.parse("2026-12-07T06:00:00Z");

    @Test
    void aRestartFromAnOlderCheckpointCountsOnlyTheStepsPastTheBestReached() {
        StepProgress p = new StepProgress();
        // attempt 0: steps 0-100, one a second; it fails at step 100
        for (int s = 0; s <= 100; s++) {
            p.step(0, 0, T0.plusSeconds(s), s);
            p.step(1, 0, T0.plusSeconds(s), s);
        }
        // attempt 1 resumes from the checkpoint of step 80, 15 s after the failure, and goes on to step 200
        for (int s = 80; s <= 200; s++) {
            p.step(0, 1, T0.plusSeconds(115 + s - 80), s);
        }
        StepProgress.Useful u = p.useful().orElseThrow();
        assertThat(u.rank()).isZero();
        assertThat(u.seconds()).isEqualTo(200.0);
        assertThat(u.redoneSteps()).isEqualTo(20.0);
    }

    @Test
    void aRunThatNeverMarkedAStepHasNoneAndTheLowestRankStandsInForRankZero() {
        StepProgress p = new StepProgress();
        assertThat(p.useful()).isEmpty();
        p.step(3, 0, T0, 0);
        p.step(3, 0, T0.plusSeconds(4), 2);
        p.step(5, 0, T0, 0);
        assertThat(p.useful().orElseThrow().rank()).isEqualTo(3);
        assertThat(p.useful().orElseThrow().seconds()).isEqualTo(4.0);
    }

    /** A mark out of order, a step that goes back within one attempt, and the first mark of an attempt add no time. */
    @Test
    void marksThatDoNotAdvanceAddNothing() {
        StepProgress p = new StepProgress();
        p.step(0, 0, T0.plusSeconds(10), 5);
        p.step(0, 0, T0.plusSeconds(9), 6);
        p.step(0, 0, T0.plusSeconds(12), 3);
        p.step(0, 1, T0.plusSeconds(30), 50);
        assertThat(p.useful().orElseThrow().seconds()).isZero();
        p.step(0, 1, T0.plusSeconds(31), 51);
        assertThat(p.useful().orElseThrow().seconds()).isEqualTo(1.0);
    }
}
