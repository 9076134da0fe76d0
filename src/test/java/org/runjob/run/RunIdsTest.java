package org.runjob.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.session.Interrupts;

/** Two runs of one job in the same second get two folders, even when their salts agree. */
class RunIdsTest {

    @TempDir
    Path tmp;

    private static Io io() {
        PrintStream sink = new PrintStream(new ByteArrayOutputStream());
        return new Io(sink, sink, Map.of(), Clock.fixed(Instant.parse("2026-12-03T05:00:00Z"), ZoneOffset.UTC), () -> 0xab12, false,
                Interrupts.none());
    }

    @Test
    void aSecondRunInTheSameSecondWithTheSameSaltGetsTheNextId() throws Exception {
        Path jobLogs = tmp.resolve("runs/job");
        assertThat(RunIds.claim(io(), jobLogs)).isEqualTo("20261203-050000-ab12");
        assertThat(RunIds.claim(io(), jobLogs)).isEqualTo("20261203-050000-ab13");
        try (var folders = Files.list(jobLogs)) {
            assertThat(folders.map(p -> p.getFileName().toString()).sorted().toList())
                    .containsExactly("20261203-050000-ab12", "20261203-050000-ab13");
        }
        // a given id's folder is used as it is
        assertThat(RunIds.reuse(jobLogs, "20261203-050000-ab12")).isEqualTo("20261203-050000-ab12");
    }

    @Test
    void aFolderThatCannotBeMadeIsNamedWithTheIdTriedFirst() throws Exception {
        Path file = Files.writeString(tmp.resolve("not-a-dir"), "");
        assertThatThrownBy(() -> RunIds.claim(io(), file.resolve("job")))
                .isInstanceOfSatisfying(RunIds.NotCreated.class, e -> assertThat(e.folder).isEqualTo(file.resolve("job/20261203-050000-ab12")));
    }
}
