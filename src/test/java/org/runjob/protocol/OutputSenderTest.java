package org.runjob.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.distribute.Sha256;

/** The agent sends exactly the regular files under the named paths, chunked and hashed; symlinks and paths outside are named, never read. */
class OutputSenderTest {

    @TempDir
    Path tmp;

    @Test
    void filesAreSentInChunksWithTheirHashAndSymlinksAndOutsidePathsAreSkippedByName() throws Exception {
        Path run = Files.createDirectories(tmp.resolve("run"));
        Files.createDirectories(run.resolve("ckpt/sub"));
        byte[] big = new byte[OutputSender.CHUNK + 5];
        big[OutputSender.CHUNK + 4] = 7;
        Files.write(run.resolve("ckpt/sub/model.bin"), big);
        Files.writeString(run.resolve("ckpt/a.json"), "{}");
        Files.writeString(tmp.resolve("secret"), "s");
        Files.createSymbolicLink(run.resolve("ckpt/link"), tmp.resolve("secret"));
        Files.createSymbolicLink(run.resolve("top"), tmp.resolve("secret"));
        Map<Integer, ByteArrayOutputStream> got = new HashMap<>();
        Map<Integer, Integer> ends = new HashMap<>();
        Outputs.Manifest m = OutputSender.send(List.of("ckpt", "top", "../secret", "nothing"), run, f -> {
            assertThat(f.type()).isEqualTo(Frame.Type.OUTPUT_DATA);
            if (f.payload().length == 0) {
                ends.merge(f.rank(), 1, Integer::sum);
            } else {
                got.computeIfAbsent(f.rank(), i -> new ByteArrayOutputStream()).writeBytes(f.payload());
            }
        });
        assertThat(m.files()).extracting(Outputs.Entry::path).containsExactly("ckpt/a.json", "ckpt/sub/model.bin");
        assertThat(m.files().get(1).size()).isEqualTo(big.length);
        assertThat(m.files().get(1).sha256()).isEqualTo(Sha256.of(run.resolve("ckpt/sub/model.bin")));
        assertThat(got.get(1).toByteArray()).isEqualTo(big);
        assertThat(ends).containsExactlyInAnyOrderEntriesOf(Map.of(0, 1, 1, 1));
        assertThat(m.skipped()).containsExactly("ckpt/link: a symlink (never followed)", "top: a symlink (never followed)",
                "../secret: not inside the run's directory", "nothing: no such file");
        assertThat(Outputs.Manifest.decode(m.encode())).isEqualTo(m);
    }

    @Test
    void aSymlinkedDirectoryOnTheWayIsNeverFollowedWhereverThePathNamesIt() throws Exception {
        Path run = Files.createDirectories(tmp.resolve("run"));
        Path etc = Files.createDirectories(tmp.resolve("etc"));
        Files.writeString(etc.resolve("shadow"), "root:secret");
        Files.createDirectories(etc.resolve("ssh"));
        Files.writeString(etc.resolve("ssh/key"), "private");
        Files.createSymbolicLink(run.resolve("etcdir"), etc);
        Files.createDirectories(run.resolve("out"));
        Files.createSymbolicLink(run.resolve("out/deeper"), etc);
        List<Frame> frames = new ArrayList<>();
        Outputs.Manifest m = OutputSender.send(List.of("etcdir/shadow", "etcdir/ssh", "etcdir/ssh/key", "out/deeper/shadow", "out"), run,
                frames::add);
        assertThat(m.files()).isEmpty();
        assertThat(frames).isEmpty();
        assertThat(m.skipped()).containsExactly("etcdir: a symlink (never followed)", "etcdir: a symlink (never followed)",
                "etcdir: a symlink (never followed)", "out/deeper: a symlink (never followed)", "out/deeper: a symlink (never followed)");
    }

    @Test
    void aFileThatChangesWhileItIsReadIsDroppedAndSaidSoNeverKeptAsAMix() throws Exception {
        Path run = Files.createDirectories(tmp.resolve("run"));
        Files.write(run.resolve("growing.bin"), new byte[OutputSender.CHUNK * 2]);
        Files.writeString(run.resolve("steady.txt"), "done");
        List<Frame> frames = new ArrayList<>();
        Outputs.Manifest m = OutputSender.send(List.of("growing.bin", "steady.txt"), run, f -> {
            if (frames.isEmpty()) {
                try {
                    Files.write(run.resolve("growing.bin"), new byte[] {1}, StandardOpenOption.APPEND);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            frames.add(f);
        });
        assertThat(m.files()).extracting(Outputs.Entry::path, Outputs.Entry::size).containsExactly(tuple("growing.bin", -1L),
                tuple("steady.txt", 4L));
        assertThat(m.skipped()).containsExactly("growing.bin: changed while it was read (something still writes it): not kept; "
                + "pull it again once it is written");
    }

    @Test
    void filesPastTheByteLimitAreNamedNotSent() throws Exception {
        Path run = Files.createDirectories(tmp.resolve("run"));
        Files.write(run.resolve("a.bin"), new byte[600]);
        Files.write(run.resolve("b.bin"), new byte[600]);
        Files.write(run.resolve("c.bin"), new byte[300]);
        Outputs.Manifest m = OutputSender.send(List.of("a.bin", "b.bin", "c.bin"), 1000, run, f -> { });
        assertThat(m.files()).extracting(Outputs.Entry::path).containsExactly("a.bin", "c.bin");
        assertThat(m.skipped()).containsExactly("b.bin: not brought: the outputs of this node reached the limit (1000 bytes, outputs_max_gib)");
    }
}
