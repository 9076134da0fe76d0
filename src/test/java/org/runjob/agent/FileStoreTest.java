package org.runjob.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
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
}
