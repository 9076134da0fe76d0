package org.runjob.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MetricsTailTest {

    @TempDir
    Path dir;

    private final List<String> chunks = new ArrayList<>();

    private MetricsTail tail(Path file) {
        return new MetricsTail(file, (skipped, b) -> {
            if (skipped > 0) {
                chunks.add("skipped " + skipped);
            }
            if (b.length > 0) {
                chunks.add(new String(b, StandardCharsets.UTF_8));
            }
        });
    }

    private static void append(Path file, String text) throws Exception {
        Files.writeString(file, text, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    @Test
    void completeLinesAreHandedOnOnceAndAPartialLineWaitsForItsNewline() throws Exception {
        Path file = dir.resolve("m.jsonl");
        MetricsTail t = tail(file);
        t.poll();
        assertThat(chunks).as("no file yet").isEmpty();
        append(file, "{\"step\": 1}\n{\"step\": 2}\n{\"ste");
        t.poll();
        assertThat(chunks).containsExactly("{\"step\": 1}\n{\"step\": 2}\n");
        t.poll();
        assertThat(chunks).hasSize(1);
        append(file, "p\": 3}\n");
        t.poll();
        assertThat(chunks).containsExactly("{\"step\": 1}\n{\"step\": 2}\n", "{\"step\": 3}\n");
        append(file, "{\"step\": 4}");
        t.finish();
        assertThat(chunks).last().isEqualTo("{\"step\": 4}\n");
    }

    @Test
    void aTruncatedFileIsReadAgainFromItsStart() throws Exception {
        Path file = dir.resolve("m.jsonl");
        MetricsTail t = tail(file);
        append(file, "{\"a\": 1}\n{\"a\": 2}\n");
        t.poll();
        Files.writeString(file, "{\"b\": 1}\n");
        t.poll();
        assertThat(chunks).containsExactly("{\"a\": 1}\n{\"a\": 2}\n", "{\"b\": 1}\n");
    }

    @Test
    void aLineLongerThanALineMayBeIsHandedOnCutAndTheNextLineWhole() throws Exception {
        Path file = dir.resolve("m.jsonl");
        MetricsTail t = tail(file);
        append(file, "x".repeat(MetricsTail.MAX_LINE + 10) + "\n{\"ok\": 1}\n");
        t.poll();
        t.poll(); // more than one poll's share
        String all = String.join("", chunks);
        assertThat(all.lines().toList()).hasSize(2);
        assertThat(all.lines().toList().get(0)).hasSize(MetricsTail.MAX_LINE);
        assertThat(all.lines().toList().get(1)).isEqualTo("{\"ok\": 1}");
    }

    @Test
    void aSymlinkIsNotRead() throws Exception {
        Path secret = Files.writeString(dir.resolve("secret"), "{\"key\": \"not for the run\"}\n");
        Path file = Files.createSymbolicLink(dir.resolve("m.jsonl"), secret);
        MetricsTail t = tail(file);
        t.poll();
        t.finish();
        assertThat(chunks).isEmpty();
    }

    @Test
    void aWorkerGetsAFileOfItsRunAttemptAndRankWithNothingLeftInIt() throws Exception {
        Map<String, String> env = new HashMap<>(Map.of("RUNJOB_RUN_ID", "r1", "RUNJOB_ATTEMPT", "2", "RANK", "5"));
        Path expected = dir.resolve(".runjob/metrics/r1-attempt-2-rank-5.jsonl");
        Files.createDirectories(expected.getParent());
        Files.writeString(expected, "{\"stale\": 1}\n");
        assertThat(MetricsTail.fileFor(dir, env)).isEqualTo(expected);
        assertThat(env).containsEntry(MetricsTail.VARIABLE, expected.toString());
        assertThat(expected).doesNotExist();
        // the job's own name is kept, relative to the workdir
        Map<String, String> own = new HashMap<>(Map.of(MetricsTail.VARIABLE, "out/m.jsonl"));
        assertThat(MetricsTail.fileFor(dir, own)).isEqualTo(dir.resolve("out/m.jsonl"));
        assertThat(own).containsEntry(MetricsTail.VARIABLE, dir.resolve("out/m.jsonl").toString());
    }

    @Test
    void aPollForwardsAtMostItsShareAndAFileFarAheadIsSkippedToItsNextLineWithTheCount() throws Exception {
        Path file = dir.resolve("flood.jsonl");
        String line = "{\"step\": 1, \"pad\": \"" + "x".repeat(1000) + "\"}\n";
        int perPoll = (int) (MetricsTail.PER_POLL / line.length());
        append(file, line.repeat(perPoll + 10));
        MetricsTail t = tail(file);
        t.poll();
        assertThat(String.join("", chunks).length()).as("one poll's share").isLessThanOrEqualTo((int) MetricsTail.PER_POLL);
        assertThat(chunks).allSatisfy(c -> assertThat(c.length()).isLessThanOrEqualTo(MetricsTail.READ + MetricsTail.MAX_LINE));
        chunks.clear();
        t.poll();
        assertThat(String.join("", chunks)).isEqualTo(line.repeat(10));

        chunks.clear();
        long ahead = MetricsTail.BACKLOG + 5 * line.length();
        append(file, "x".repeat((int) ahead - 3) + "\n{}");
        t.poll();
        assertThat(chunks).as("the file is skipped to its end, inside the line {}").containsExactly("skipped " + ahead);
        chunks.clear();
        append(file, "\n{\"step\": 2}\n");
        t.finish();
        assertThat(chunks).as("the rest of the cut line is dropped, the next line kept").containsExactly("{\"step\": 2}\n");

        chunks.clear();
        append(file, "x".repeat((int) ahead - 1) + "\n");
        t.poll();
        append(file, "{\"step\": 3}\n");
        t.poll();
        assertThat(chunks).as("skipped to a line's end: the next line is whole").containsExactly("skipped " + ahead, "{\"step\": 3}\n");
    }
}
