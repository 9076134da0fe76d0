package org.runjob.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.logs.RunFolder;

import tools.jackson.databind.json.JsonMapper;

class RunRecordsTest {

    @TempDir
    Path tmp;

    @Test
    void aSummaryBeingWrittenIsNoSummaryYet() throws Exception {
        Path folder = Files.createDirectories(tmp.resolve("job/20261202-120000-abcd"));
        for (String begun : new String[] {"", "{\"result\": \"succ"}) {
            Files.writeString(folder.resolve("summary.json"), begun);
            RunRecords.Run r = RunRecords.read(folder, Map.of());
            assertThat(r.summary()).as("summary.json of '" + begun + "'").isEmpty();
            assertThat(r.exitCode()).isEmpty();
        }
        RunFolder.of(folder).writeJson("summary.json", JsonMapper.builder().build().createObjectNode().put("result", "succeeded")
                .put("exit_code", 0));
        RunRecords.Run done = RunRecords.read(folder, Map.of());
        assertThat(done.state()).isEqualTo("succeeded");
        assertThat(done.exitCode()).isEqualTo(Optional.of(0));
        try (var files = Files.list(folder)) {
            assertThat(files.map(p -> p.getFileName().toString()).toList()).as("no temporary file left").containsExactly("summary.json");
        }
    }
}
