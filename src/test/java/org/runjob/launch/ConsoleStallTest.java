package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.testbed.RunjobProcess;

/**
 * A console that stops reading costs the run nothing: the heartbeat travels apart from the output,
 * so the agents keep their workers while runjob's stdout is blocked for five heartbeat timeouts,
 * and every line arrives once the console reads again.
 */
class ConsoleStallTest {

    @TempDir
    Path tmp;

    @Test
    void aConsoleThatReadsNothingForFiveHeartbeatTimeoutsLosesNoNodeAndNoLine() throws Exception {
        LocalJobs jobs = new LocalJobs(tmp);
        int lines = 20_000;
        // each line a write of its own, over 12 s: far more frames than runjob's queue holds, from workers still running
        Path job = LocalJobs.heartbeat(jobs.job("stall", "lines.py", 1, 2, Map.of("LINES", Integer.toString(lines), "SPREAD_S", "12"), 2, 0), 4);
        Process runjob = RunjobProcess.startPiped(tmp, job);
        try {
            // the stall itself is the case under test, not a wait for something: 20 s of a console that reads nothing,
            // five heartbeat timeouts, while the workers print
            assertThat(runjob.waitFor(20, TimeUnit.SECONDS)).as("runjob cannot end while its console is blocked").isFalse();
            long[] counts = new long[2];
            try (BufferedReader out = new BufferedReader(new InputStreamReader(runjob.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = out.readLine()) != null) {
                    if (l.contains("] rank 0 line ")) {
                        counts[0]++;
                    } else if (l.contains("] rank 1 line ")) {
                        counts[1]++;
                    }
                }
            }
            assertThat(runjob.waitFor(60, TimeUnit.SECONDS)).isTrue();
            String err = jobs.stderrOf(job);
            assertThat(runjob.exitValue()).as(err).isZero();
            assertThat(counts).containsExactly(lines, lines);
            assertThat(err).doesNotContain("lost").doesNotContain("heartbeat");
            Path folder = jobs.runFolder("stall");
            for (int rank = 0; rank < 2; rank++) {
                try (var l = Files.lines(folder.resolve("rank-" + rank + ".log"))) {
                    assertThat(l.filter(x -> x.contains(" line ")).count()).as("rank-%d.log", rank).isEqualTo(lines);
                }
            }
        } finally {
            runjob.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
