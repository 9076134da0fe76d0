package org.runjob.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.distribute.Sha256;
import org.runjob.protocol.FileManifest;

class FileStoreTest {

    @TempDir
    Path tmp;

    @Test
    void runsThatOpenAMissingStoreAtOnceEachGetIt() throws Exception {
        int racers = 8;
        ExecutorService pool = Executors.newFixedThreadPool(racers);
        try {
            for (int round = 0; round < 40; round++) {
                Path dir = tmp.resolve("w" + round).resolve(".runjob").resolve("files");
                CyclicBarrier start = new CyclicBarrier(racers);
                List<Future<Optional<FileStore>>> opened = new ArrayList<>();
                for (int i = 0; i < racers; i++) {
                    opened.add(pool.submit(() -> {
                        start.await();
                        return FileStore.open(dir);
                    }));
                }
                for (Future<Optional<FileStore>> f : opened) {
                    assertThat(f.get()).as("round " + round).isPresent();
                }
                assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).isEqualTo("rwx------");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aStoreThatIsASymlinkIsNotUsed() throws Exception {
        Path elsewhere = Files.createDirectory(tmp.resolve("elsewhere"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Files.createDirectories(tmp.resolve("w/.runjob"));
        Files.createSymbolicLink(tmp.resolve("w/.runjob/files"), elsewhere);
        assertThat(FileStore.open(tmp.resolve("w/.runjob/files"))).isEmpty();
    }

    @Test
    void aRunsCopyIsItsOwnAndAStoredCopyThatChangedIsNeverUsed() throws Exception {
        FileStore store = FileStore.open(tmp.resolve("w/.runjob/files")).orElseThrow();
        byte[] code = "print('train')\n".getBytes();
        Path a = Files.createDirectories(tmp.resolve("w/runs/a")).resolve("train.py");
        Files.write(a, code);
        Files.setLastModifiedTime(a, FileTime.fromMillis(1_700_000_000_000L));
        FileManifest.Entry e = new FileManifest.Entry("train.py", code.length, 1_700_000_000L, 0644, Sha256.of(a));
        store.keep(e, a);

        // run b gets a copy: its worker rewriting it in place reaches neither the store nor another run
        Path b = Files.createDirectories(tmp.resolve("w/runs/b")).resolve("train.py");
        assertThat(store.copyTo(e, b)).isTrue();
        assertThat(Files.readAllBytes(b)).isEqualTo(code);
        assertThat(Files.getLastModifiedTime(b).toMillis()).isEqualTo(1_700_000_000_000L);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(b))).isEqualTo("rw-r--r--");
        assertThat(Files.isSameFile(a, b)).isFalse();
        try (var out = Files.newOutputStream(b, StandardOpenOption.WRITE)) {
            out.write("print('pwned')\n".getBytes());
        }
        Path c = Files.createDirectories(tmp.resolve("w/runs/c")).resolve("train.py");
        assertThat(store.copyTo(e, c)).isTrue();
        assertThat(Files.readAllBytes(c)).isEqualTo(code);

        // run a's worker rewrites its file (the store's entry) in place, same size, its time restored: no later run gets it
        Files.write(a, "print('other')\n".getBytes());
        Files.setLastModifiedTime(a, FileTime.fromMillis(1_700_000_000_000L));
        Path d = Files.createDirectories(tmp.resolve("w/runs/d")).resolve("train.py");
        assertThat(store.copyTo(e, d)).as("a stored copy whose bytes changed").isFalse();
        assertThat(d).doesNotExist();
        try (var left = Files.list(tmp.resolve("w/.runjob/files"))) {
            assertThat(left.toList()).as("the changed entry is removed").isEmpty();
        }
        try (var left = Files.list(d.getParent())) {
            assertThat(left.toList()).as("no temporary file left").isEmpty();
        }
    }
}
