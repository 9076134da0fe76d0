package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.json.Json;
import org.runjob.testbed.RunjobProcess;

/**
 * A worker that writes its metrics file as fast as it can costs bounded memory: runjob runs under
 * a 64 MiB heap and its agent under 128 MiB (both ending on the first OutOfMemoryError), the run
 * ends as it should, and what was skipped of the file is said with a count.
 */
class MetricsFloodTest {

    @TempDir
    Path tmp;

    @Test
    void aWorkerFloodingItsMetricsFileForTenSecondsRunsUnderSmallHeapsAndTheSkippedBytesAreCounted() throws Exception {
        LocalJobs jobs = new LocalJobs(tmp);
        Path job = jobs.job("mflood", "metrics_flood.py", 1, 1, Map.of("FLOOD_S", "10"), 2, 0);
        Process runjob = RunjobProcess.start(tmp, "mflood.yaml", Map.of("JAVA_TOOL_OPTIONS", "-Xmx128m -XX:+ExitOnOutOfMemoryError"),
                List.of("-XX:+UseSerialGC", "-Xmx64m", "-XX:+ExitOnOutOfMemoryError"), List.of(), job, List.of());
        assertThat(runjob.waitFor(180, TimeUnit.SECONDS)).isTrue();
        String err = Files.readString(tmp.resolve("mflood.yaml.err"));
        String out = Files.readString(tmp.resolve("mflood.yaml.out"));
        assertThat(runjob.exitValue()).as(err).isZero();
        Matcher wrote = Pattern.compile("rank 0 wrote (\\d+) metrics lines, (\\d+) bytes").matcher(out);
        assertThat(wrote.find()).as(out).isTrue();
        long written = Long.parseLong(wrote.group(1));
        long writtenBytes = Long.parseLong(wrote.group(2));
        Path folder = jobs.runFolder("mflood");
        long kept;
        try (var l = Files.lines(folder.resolve("metrics/rank-0.jsonl"))) {
            kept = l.count();
        }
        // a worker writing this fast outruns 1 MiB/s within a second: most of the file is skipped, and said
        Matcher skipped = Pattern.compile("runjob: note: rank 0's metrics file grew faster than runjob takes it \\(1 MiB/s\\): (\\d+) bytes"
                + " skipped\n").matcher(err);
        assertThat(skipped.find()).as(err).isTrue();
        long skippedBytes = Long.parseLong(skipped.group(1));
        assertThat(skippedBytes).isPositive().isLessThan(writtenBytes);
        assertThat(kept).isPositive().isLessThan(written);
        var summary = Json.MAPPER.readTree(Files.readString(folder.resolve("summary.json")));
        assertThat(summary.path("metrics").path("ranks").path("0").path("skipped_bytes").asLong()).isEqualTo(skippedBytes);
        assertThat(summary.path("metrics").path("ranks").path("0").path("lines").asLong()).isEqualTo(kept);
        assertThat(folder.resolve("summary.json")).isRegularFile();
    }
}
