package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.testbed.RunjobProcess;

/**
 * A setup that floods its output costs memory in neither runjob nor the agent: a 256 MiB line is
 * cut to its first 16 KiB and said so, and 64 MiB of lines printed while the console reads nothing
 * wait in the agent's spool, not in runjob. runjob runs under a 64 MiB heap and the agent under
 * 128 MiB, both ending on the first OutOfMemoryError, so holding either stream whole fails the run.
 */
class SetupFloodTest {

    private static final int LINES = 65_536;
    private static final int LINE_BYTES = 1024;
    private static final long LONG_LINE = 256L << 20;

    @TempDir
    Path tmp;

    @Test
    void aSetupPrinting320MibIntoAStalledConsoleRunsUnderSmallHeapsWithEveryLineAndTheLongOneCut() throws Exception {
        LocalJobs jobs = new LocalJobs(tmp);
        Path job = jobs.job("flood", "lines.py", 1, 1, Map.of("LINES", "3"), 2, 0);
        Files.writeString(job, Files.readString(job) + "environment: {setup: ['python3 " + LocalJobs.WORKERS.resolve("setup_flood.py") + " "
                + (LONG_LINE >> 20) + " " + LINES + "']}\n");
        Process runjob = RunjobProcess.startPiped(tmp, job, Map.of("JAVA_TOOL_OPTIONS", "-Xmx128m -XX:+ExitOnOutOfMemoryError"),
                List.of("-XX:+UseSerialGC", "-Xmx64m", "-XX:+ExitOnOutOfMemoryError"));
        List<String> other = new ArrayList<>();
        try {
            // the stall is the case under test: 15 s in which the setup prints everything and the console reads nothing
            assertThat(runjob.waitFor(15, TimeUnit.SECONDS)).as("runjob cannot end while its console is blocked").isFalse();
            long setupLines = 0;
            String first = null;
            long workerLines = 0;
            try (BufferedReader out = new BufferedReader(new InputStreamReader(runjob.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = out.readLine()) != null) {
                    if (l.startsWith("[n1/setup] xxx")) {
                        first = l;
                    } else if (l.startsWith("[n1/setup] setup line ")) {
                        assertThat(l).hasSize("[n1/setup] ".length() + LINE_BYTES - 1);
                        setupLines++;
                    } else if (l.contains("] rank 0 line ")) {
                        workerLines++;
                    } else if (other.size() < 100) {
                        other.add(l);
                    }
                }
            }
            assertThat(runjob.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(runjob.exitValue()).as(String.join("\n", other)).isZero();
            assertThat(setupLines).isEqualTo(LINES);
            assertThat(workerLines).isEqualTo(3);
            assertThat(first).isEqualTo("[n1/setup] " + "x".repeat(16 * 1024) + " [line cut: " + (LONG_LINE - 16 * 1024) + " more bytes]");
            try (var l = Files.lines(jobs.runFolder("flood").resolve("setup/n1.log"))) {
                assertThat(l.count()).isEqualTo(LINES + 1);
            }
        } finally {
            runjob.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
