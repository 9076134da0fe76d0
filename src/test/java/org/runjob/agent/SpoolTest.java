package org.runjob.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.protocol.Frame;

class SpoolTest {

    @TempDir
    Path tmp;

    @Test
    void framesComeOutInOrderAcrossMemoryAndSpillFile() throws Exception {
        try (Spool spool = new Spool(100, tmp)) {
            for (int i = 0; i < 50; i++) {
                spool.put(new Frame(Frame.Type.STDOUT, i, new byte[] {(byte) i, (byte) i, (byte) i, (byte) i, (byte) i,
                    (byte) i, (byte) i, (byte) i, (byte) i, (byte) i}));
            }
            assertThat(spool.spilledBytesTotal()).isEqualTo(400);
            for (int i = 0; i < 25; i++) {
                assertThat(spool.take(0).rank()).isEqualTo(i);
            }
            // memory frees up, but the file still holds older frames: new ones must queue behind them
            spool.put(new Frame(Frame.Type.STDERR, 50, new byte[1]));
            for (int i = 25; i < 50; i++) {
                Frame f = spool.take(0);
                assertThat(f.rank()).isEqualTo(i);
                assertThat(f.payload()).hasSize(10).containsOnly((byte) i);
            }
            assertThat(spool.take(0).rank()).isEqualTo(50);
            assertThat(spool.take(0)).isNull();
            assertThat(spool.isEmpty()).isTrue();
        }
        try (var files = Files.list(tmp)) {
            assertThat(files).isEmpty();
        }
    }

    @Test
    void aPongOvertakesEveryQueuedFrameInMemoryAndInTheSpillFile() throws Exception {
        try (Spool spool = new Spool(20, tmp)) {
            for (int i = 0; i < 5; i++) {
                spool.put(new Frame(Frame.Type.STDOUT, i, new byte[10]));
            }
            assertThat(spool.spilledBytesTotal()).isEqualTo(30);
            spool.put(new Frame(Frame.Type.PONG, -1, new byte[] {7}));
            Frame first = spool.take(0);
            assertThat(first.type()).isEqualTo(Frame.Type.PONG);
            assertThat(first.payload()).containsExactly(7);
            for (int i = 0; i < 5; i++) {
                Frame f = spool.take(0);
                assertThat(f.type()).isEqualTo(Frame.Type.STDOUT);
                assertThat(f.rank()).isEqualTo(i);
            }
            assertThat(spool.isEmpty()).isTrue();
        }
    }
}
