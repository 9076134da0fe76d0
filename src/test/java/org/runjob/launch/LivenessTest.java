package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.runjob.protocol.Frame;
import org.runjob.session.AgentChannel;

/** The heartbeat on simulated timelines: what is pinged, and when an agent counts as silent. */
class LivenessTest {

    /** The clock, in seconds, as nanoseconds. */
    private long now;
    private final List<String> suspects = new ArrayList<>();

    /** A channel whose agent last sent a frame at {@code lastRead} s. */
    private final class Fake implements AgentChannel {
        final String node;
        final List<Long> pings = new ArrayList<>();
        long lastRead;

        Fake(String node, long lastRead) {
            this.node = node;
            this.lastRead = lastRead;
        }

        @Override
        public String node() {
            return node;
        }

        @Override
        public void send(Frame frame) {
            assertThat(frame.type()).isEqualTo(Frame.Type.PING);
            pings.add(now / 1_000_000_000L);
        }

        @Override
        public boolean silentFor(long nanos) {
            return now - TimeUnit.SECONDS.toNanos(lastRead) > nanos;
        }

        @Override
        public void forceClose() {
        }

        @Override
        public void close() {
        }
    }

    private void at(long seconds) {
        now = TimeUnit.SECONDS.toNanos(seconds);
    }

    @Test
    void anAgentIsSilentOnlyAfterTheTimeoutSinceItWasWatched() {
        Liveness live = new Liveness(15_000, () -> now, suspects::add);
        // node a said HELLO at 0 s; node b's login took 20 s, so the attempt's agents are watched from 20 s on
        Fake a = new Fake("a", 0);
        at(20);
        live.watch(a);
        for (long t = 20; t <= 34; t += 2) {
            at(t);
            live.beat();
        }
        assertThat(live.silent()).as("15 s since 20 s have not passed").isEmpty();
        assertThat(suspects).as("silent for half the timeout since 20 s, at 28 s: its node is tried afresh meanwhile").containsExactly("a");
        assertThat(a.pings).containsExactly(20L, 22L, 24L, 26L, 28L, 30L, 32L, 34L);
        at(36);
        live.beat();
        assertThat(live.silent()).containsExactly(a);
        at(38);
        live.beat();
        assertThat(live.silent()).as("once, then no longer watched").isEmpty();
        assertThat(a.pings).endsWith(36L);
    }

    @Test
    void anAgentThatAnswersIsNeverSilentAndAForgottenOneIsNeitherPingedNorJudged() {
        Liveness live = new Liveness(4_000, () -> now, suspects::add);
        Fake answers = new Fake("a", 0);
        Fake quiet = new Fake("b", 0);
        at(0);
        live.watch(answers);
        live.watch(quiet);
        for (long t = 2; t <= 60; t += 2) {
            at(t);
            answers.lastRead = t - 1; // its PONG to the last PING
            if (t == 4) {
                live.forget("b");
            }
            live.beat();
            assertThat(live.silent()).as("at %d s", t).isEmpty();
        }
        assertThat(answers.pings).hasSize(30);
        assertThat(suspects).as("an agent that answers is never suspected").isEmpty();
        assertThat(quiet.pings).containsExactly(2L);
    }
}
