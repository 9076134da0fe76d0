package org.runjob.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.protocol.Frame;
import org.runjob.protocol.OutputSender;
import org.runjob.protocol.Outputs;

/** Outputs land checked, sparse files stay sparse, and a disk that would fill stops them with why. */
class OutputReceiverTest {

    @TempDir
    Path tmp;

    private static long allocatedBytes(Path f) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("stat", "--format=%b %B", f.toString()).start();
        String[] out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim().split(" ");
        assertThat(p.waitFor()).isZero();
        return Long.parseLong(out[0]) * Long.parseLong(out[1]);
    }

    private Outputs.Manifest pass(Path run, List<String> paths, OutputReceiver receiver) throws IOException {
        Outputs.Manifest m = OutputSender.send(paths, run, (Frame f) -> receiver.chunk(f.rank(), f.payload()));
        return receiver.finish(m, "the test");
    }

    @Test
    void aSparseFileLandsSparseWithItsContentAndSize() throws Exception {
        Path run = Files.createDirectories(tmp.resolve("run"));
        Path sparse = run.resolve("sparse.bin");
        try (var ch = FileChannel.open(sparse, StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap("head".getBytes(StandardCharsets.US_ASCII)), 0);
            ch.write(ByteBuffer.wrap("tail".getBytes(StandardCharsets.US_ASCII)), (256L << 20) - 4);
        }
        Path into = tmp.resolve("outputs");
        pass(run, List.of("sparse.bin"), new OutputReceiver(into));
        Path got = into.resolve("sparse.bin");
        assertThat(Files.size(got)).isEqualTo(256L << 20);
        assertThat(Files.mismatch(got, sparse)).isEqualTo(-1);
        assertThat(allocatedBytes(got)).as("256 MiB of which 8 bytes are data").isLessThan(8L << 20);
        assertThat(into.resolve(".incoming")).doesNotExist();
    }

    @Test
    void aDiskThatWouldKeepLessThanTheReserveStopsTheOutputsWithWhyAndLeavesNothingIncoming() throws Exception {
        Path run = Files.createDirectories(tmp.resolve("run"));
        Files.writeString(run.resolve("a.txt"), "a");
        Path into = tmp.resolve("outputs");
        long free = Files.getFileStore(tmp).getUsableSpace();
        try (OutputReceiver receiver = new OutputReceiver(into, free + (1L << 30))) {
            assertThatThrownBy(() -> pass(run, List.of("a.txt"), receiver)).isInstanceOf(IOException.class)
                    .hasMessageContaining("MiB free, and outputs keep ").hasMessageContaining("outputs stopped (free some space, then runjob pull)");
        }
        assertThat(into.resolve("a.txt")).doesNotExist();
        assertThat(into.resolve(".incoming")).doesNotExist();
    }
}
