package org.runjob.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;
import org.runjob.testbed.CpuHogs;
import org.runjob.testbed.Leftovers;
import org.runjob.testbed.OnSshTestbed;
import org.runjob.testbed.RunjobJvm;

/**
 * A busy machine costs no node and no line: with 20 CPU hogs (a load average of about 20 on the
 * 2-core testbed machine, launcher, sshds and agents all on it) three nodes of 8 workers each
 * print every line, and no node is lost. runjob's console is a pipe to a reader on the same busy
 * machine (at nice 19, as a terminal or a {@code tee} that gets little of the CPU), so it is
 * often full.
 */
@OnSshTestbed
@Isolated("its 20 CPU hogs would slow every class of the other streams; it runs alone")
class LoadTest {

    /** Busy-looping processes: the load, made in the test. */
    static final int HOGS = 20;

    @TempDir
    Path tmp;

    ClusterJobs jobs;
    @RegisterExtension
    final Leftovers toClean = new Leftovers();

    @BeforeEach
    void setUp() throws Exception {
        jobs = new ClusterJobs(tmp);
    }

    @Test
    void atALoadOfTwentyThreeNodesOfEightWorkersDeliverEveryLineAndLoseNoNode() throws Exception {
        int lines = 50_000;
        // each line flushed on its own over 20 s: many small frames from workers that keep running under the load
        Path job = jobs.job("load", jobs.node(jobs.bed.host(1), 8) + jobs.node(jobs.bed.host(2), 8) + jobs.node(jobs.bed.host(3), 8),
                jobs.worker("lines.py"), List.of("python3", "lines.py"), "",
                Map.of("LINES", Integer.toString(lines), "SPREAD_S", "20"));
        try (CpuHogs load = CpuHogs.start(HOGS)) {
            List<Process> pipeline = ProcessBuilder.startPipeline(List.of(
                    new ProcessBuilder(RunjobJvm.command(List.of(job.toString())))
                            .directory(tmp.toFile()).redirectError(tmp.resolve("load.yaml.err").toFile()),
                    new ProcessBuilder("nice", "-n", "19", "sh", "-c", "exec cat > \"$0\"", tmp.resolve("load.yaml.out").toString())));
            pipeline.forEach(toClean::add);
            Process runjob = pipeline.get(0);
            assertThat(runjob.waitFor(400, TimeUnit.SECONDS)).as("runjob ends").isTrue();
            String loadAtEnd = Files.readString(Path.of("/proc/loadavg")).strip();
            String err = jobs.stderrOf(job);
            assertThat(runjob.exitValue()).as("load average at the end %s: %s", loadAtEnd, err).isZero();
            assertThat(err).doesNotContain("lost").doesNotContain("heartbeat").doesNotContain("quarantined");
            // the case held: the 1-minute load average had climbed past 10 (it reads 15-25 here after the run's 60-100 s)
            assertThat(Double.parseDouble(loadAtEnd.split(" ")[0])).as("load average %s", loadAtEnd).isGreaterThan(10);
            System.out.println("LoadTest: load average at the run's end " + loadAtEnd);
        }
        Path folder = NodeSideTest.runFolder("load", jobs.logs);
        for (int rank = 0; rank < 24; rank++) {
            List<String> file = Files.readAllLines(folder.resolve("rank-" + rank + ".log"));
            int r = rank;
            assertThat(file.stream().filter(l -> l.startsWith("rank " + r + " line ")).count()).as("rank %d's lines", rank).isEqualTo(lines);
            assertThat(file.get(file.size() - 1)).as("rank %d's file ends with a whole line", rank).matches("rank \\d+ (line|err) \\d+");
            assertThat(Files.readString(folder.resolve("rank-" + rank + ".log"))).endsWith("\n");
        }
        assertThat(countLines(folder.resolve("all.log"))).isEqualTo(24L * (lines + lines / 1000));
    }

    private static long countLines(Path file) throws IOException {
        try (Stream<String> s = Files.lines(file)) {
            return s.count();
        }
    }
}
