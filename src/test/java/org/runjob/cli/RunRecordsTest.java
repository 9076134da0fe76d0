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

    @Test
    void aRecordLargerThanRunjobWritesIsNotReadAndTheOtherRunsAreStillListed() throws Exception {
        Path big = Files.createDirectories(tmp.resolve("runs/job/20261202-120000-aaaa"));
        String pad = "x".repeat(17 << 20);
        Files.writeString(big.resolve("status.json"), "{\"state\": \"running\", \"pad\": \"" + pad + "\"}");
        Path fine = Files.createDirectories(tmp.resolve("runs/job/20261202-120001-bbbb"));
        RunFolder.of(fine).writeJson("summary.json", JsonMapper.builder().build().createObjectNode().put("result", "succeeded")
                .put("exit_code", 0));
        Cli runs = Cli.run(Map.of(), "runs", "--logs-dir", tmp.resolve("runs").toString());
        assertThat(runs.code()).as(runs.err()).isZero();
        assertThat(runs.out()).containsPattern("20261202-120000-aaaa +job +unreadable ").containsPattern("20261202-120001-bbbb +job +succeeded ");
        Cli status = Cli.run(Map.of(), "status", "20261202-120000-aaaa", "--logs-dir", tmp.resolve("runs").toString());
        assertThat(status.out()).contains("why: status.json is 17 MiB, more than the 16 MiB runjob reads back: not runjob's\n");
    }
}
