package org.runjob.logs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StragglerWatchTest {

    @TempDir
    Path dir;

    private final List<String> said = new ArrayList<>();
    private static final Instant T0 = Instant.parse("2026-12-06T10:00:00Z");

    /** Four ranks stepping every {@code stepMs} (rank 2 {@code slowMs} more), each step +-{@code jitterMs}, judged every 1 s for {@code seconds}. */
    private StragglerWatch run(long stepMs, long slowMs, long jitterMs, int seconds) {
        StragglerWatch w = new StragglerWatch(dir, 20, Duration.ofSeconds(1), said::add);
        Random random = new Random(7);
        long[] next = new long[4];
        int[] step = new int[4];
        for (int r = 0; r < 4; r++) {
            next[r] = stepMs + (r == 2 ? slowMs : 0);
        }
        for (long ms = 0; ms <= seconds * 1000L; ms += 10) {
            for (int r = 0; r < 4; r++) {
                if (ms >= next[r]) {
                    w.step(r, "n" + r, T0.plusMillis(ms), step[r]++);
                    next[r] = ms + stepMs + (r == 2 ? slowMs : 0) + (jitterMs == 0 ? 0 : random.nextLong(-jitterMs, jitterMs + 1));
                }
            }
            w.tick(T0.plusMillis(ms));
        }
        return w;
    }

    @Test
    void aRankTwoHundredMillisecondsSlowerPerStepIsNamedOnceAfterThreeWindows() {
        StragglerWatch w = run(300, 200, 0, 10);
        assertThat(said).hasSize(1);
        assertThat(said.get(0)).matches("runjob: rank 2 on n2 is a straggler: its step time 0\\.5\\d s is 6\\d % above the other ranks'"
                + " median 0\\.3\\d s \\(3 windows of 1\\.00 s in a row\\)");
        assertThat(w.episodes()).hasSize(1);
        assertThat(w.episodes().get(0).rank()).isEqualTo(2);
        assertThat(w.episodes().get(0).to()).isEmpty();
        // its worker ends: the episode ends with it, and nothing more is said
        w.ended(2, T0.plusSeconds(11));
        assertThat(w.episodes().get(0).to()).contains(T0.plusSeconds(11));
        assertThat(said).hasSize(1);
    }

    /**
     * Rank 3 ends first; its last metrics line arrives after its exit. It is never named (its marks
     * stop: that is not falling behind), and the still-slow rank 2 is never declared caught up.
     */
    @Test
    void anEndedRankIsNeverJudgedAndTheSlowRankStaysNamedUntilItsStepTimeIsBack() {
        StragglerWatch w = new StragglerWatch(dir, 20, Duration.ofSeconds(1), said::add);
        int[] step = new int[4];
        for (long ms = 0; ms <= 20_000; ms += 10) {
            for (int r = 0; r < 4; r++) {
                boolean running = r != 3 || ms <= 5_000;
                long every = r == 2 ? 600 : 200;
                if (running && ms > 0 && ms % every == 0) {
                    w.step(r, "n" + r, T0.plusMillis(ms), step[r]++);
                }
            }
            if (ms == 5_010) {
                w.ended(3, T0.plusMillis(ms));
                // a line its agent read before the exit, delivered after it
                w.step(3, "n3", T0.plusMillis(5_000), step[3]++);
            }
            w.tick(T0.plusMillis(ms));
        }
        assertThat(said).hasSize(1);
        assertThat(said.get(0)).startsWith("runjob: rank 2 on n2 is a straggler: its step time 0.60 s is 200 % above the other ranks' median 0.20 s");
        assertThat(w.episodes()).hasSize(1);
        assertThat(w.episodes().get(0).to()).isEmpty();
    }

    @Test
    void uniformRanksWithJitterAreNeverNamed() {
        StragglerWatch w = run(200, 0, 50, 120);
        assertThat(said).isEmpty();
        assertThat(w.episodes()).isEmpty();
    }

    @Test
    void aRankThatCatchesUpIsNoLongerNamed() {
        StragglerWatch w = new StragglerWatch(dir, 20, Duration.ofSeconds(1), said::add);
        int[] step = new int[3];
        for (long ms = 0; ms <= 12_000; ms += 100) {
            for (int r = 0; r < 3; r++) {
                // rank 0 takes 0.5 s a step for the first 5 s, then 0.2 s like the others
                long every = r == 0 && ms < 5000 ? 500 : 200;
                if (ms % every == 0) {
                    w.step(r, "n", T0.plusMillis(ms), step[r]++);
                }
            }
            w.tick(T0.plusMillis(ms));
        }
        assertThat(said).hasSize(2);
        assertThat(said.get(0)).startsWith("runjob: rank 0 on n is a straggler: its step time 0.50 s is 150 % above");
        assertThat(said.get(1)).isEqualTo("runjob: rank 0 on n is no longer a straggler (step time 0.20 s)");
        assertThat(w.episodes().get(0).to()).isPresent();
    }

    @Test
    void aRankWhoseGpuIdlesWhileItsPeersWorkIsNamed() {
        StragglerWatch w = new StragglerWatch(dir, 20, Duration.ofSeconds(1), said::add);
        for (long ms = 0; ms <= 5000; ms += 500) {
            for (int r = 0; r < 4; r++) {
                w.utilization(r, "n", r == 3 ? 10 : 90);
            }
            w.tick(T0.plusMillis(ms));
        }
        assertThat(said).containsExactly("runjob: rank 3 on n is a straggler: its GPU utilization 10 % is under half the other ranks' median"
                + " 90 % (3 windows of 1.00 s in a row)");
    }
}
