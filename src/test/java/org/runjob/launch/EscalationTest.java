package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** The stop's timeline on a clock the test moves: STOP, KILL after grace + slack, FORCE after KILL's slack. */
class EscalationTest {

    private long now = 1_000;

    private void advanceMs(long ms) {
        now += TimeUnit.MILLISECONDS.toNanos(ms);
    }

    @Test
    void killIsDueAfterTheGracePeriodAndItsSlackThenForceAfterKillsSlack() {
        Escalation e = new Escalation(() -> now, 2000);
        assertThat(e.due()).isEqualTo(Escalation.Step.NONE);
        assertThat(e.stop()).isTrue();
        assertThat(e.stop()).as("STOP goes once").isFalse();
        assertThat(e.stopping()).isTrue();
        advanceMs(2000 + Supervisor.STOP_SLACK_MS);
        assertThat(e.due()).as("exactly at the deadline").isEqualTo(Escalation.Step.NONE);
        advanceMs(1);
        assertThat(e.due()).isEqualTo(Escalation.Step.KILL);
        assertThat(e.kill()).isTrue();
        assertThat(e.kill()).as("KILL goes once").isFalse();
        assertThat(e.due()).isEqualTo(Escalation.Step.NONE);
        advanceMs(Supervisor.KILL_SLACK_MS + 1);
        assertThat(e.due()).isEqualTo(Escalation.Step.FORCE);
    }

    @Test
    void aSecondInterruptKillsBeforeTheGracePeriodIsOver() {
        Escalation e = new Escalation(() -> now, 30_000);
        e.stop();
        advanceMs(100);
        assertThat(e.kill()).isTrue();
        advanceMs(Supervisor.KILL_SLACK_MS + 1);
        assertThat(e.due()).isEqualTo(Escalation.Step.FORCE);
    }

    @Test
    void nothingIsDueWithoutAStop() {
        Escalation e = new Escalation(() -> now, 0);
        advanceMs(3_600_000);
        assertThat(e.due()).isEqualTo(Escalation.Step.NONE);
        assertThat(e.stopping()).isFalse();
    }
}
