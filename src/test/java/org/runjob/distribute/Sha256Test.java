package org.runjob.distribute;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class Sha256Test {

    @TempDir
    Path tmp;

    @Test
    void isWhatSha256sumPrintsAndIsHashedAgainOnlyWhenTheFileChanges() throws Exception {
        Path f = Files.writeString(tmp.resolve("f"), "abc");
        String abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assertThat(Sha256.ofSource(f)).isEqualTo(abc).isEqualTo(Sha256.of(f));
        Files.writeString(f, "abd");
        Files.setLastModifiedTime(f, FileTime.fromMillis(Files.getLastModifiedTime(f).toMillis() + 5000));
        assertThat(Sha256.ofSource(f)).isEqualTo(Sha256.of(f)).isNotEqualTo(abc);
    }
}
