package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.Leftovers;

/** Metrics on this machine's own nodes: a sweep's table shows each run's last metrics line. */
class LocalMetricsTest {

    @TempDir
    Path tmp;

    LocalJobs jobs;
    @RegisterExtension
    final Leftovers toClean = new Leftovers();

    @BeforeEach
    void setUp() throws Exception {
        jobs = new LocalJobs(tmp);
    }

    @Test
    void aSweepsTableShowsRankZerosLastMetricsLine() throws Exception {
        Path job = jobs.job("swept", "metrics.py", 1, 1, Map.of("STEPS", "3", "STEP_S", "0.05"), 1, 0);
        Files.writeString(job, Files.readString(job) + "sweep: {s: [0.05, 0.1]}\n");
        Cli r = Cli.runNow(System.getenv(), "--set", "env.STEP_S=${sweep.s}", job.toString());
        assertThat(r.code()).as(r.err()).isZero();
        List<String> table = r.out().lines().filter(l -> l.matches("\\d\\s+\\d{8}-.*")).toList();
        assertThat(table).hasSize(2);
        for (String row : table) {
            assertThat(row).matches("\\d\\s+\\S+\\s+0\\.(05|1)\\s+succeeded\\s+0\\s+[\\d.]+s\\s+step=2 loss=0\\.3333");
        }
    }

    @Test
    void theDocumentedFormOfAJobsOwnMetricsFileIsValidAndFollowed() throws Exception {
        Path job = jobs.job("ownfile", "metrics.py", 1, 1, Map.of("STEPS", "3", "STEP_S", "0.05",
                "RUNJOB_METRICS_FILE", "out/metrics.jsonl"), 1, 0);
        Cli valid = Cli.run(System.getenv(), "validate", job.toString());
        assertThat(valid.code()).as(valid.err()).isZero();
        Cli r = jobs.runInProcess(job);
        assertThat(r.code()).as(r.err()).isZero();
        Path folder = jobs.runFolder("ownfile");
        assertThat(Files.readAllLines(folder.resolve("metrics/rank-0.jsonl"))).hasSize(3);
        assertThat(Files.readAllLines(tmp.resolve("work-ownfile").resolve("runs").resolve(folder.getFileName()).resolve("out/metrics.jsonl")))
                .hasSize(3);

        Path outside = jobs.job("outside", "metrics.py", 1, 1, Map.of("RUNJOB_METRICS_FILE", "../elsewhere.jsonl"), 1, 0);
        Cli refused = Cli.run(System.getenv(), "validate", outside.toString());
        assertThat(refused.code()).isEqualTo(2);
        assertThat(refused.err()).contains("RUNJOB_METRICS_FILE must be a file's path relative to the run's directory, without ..");
    }

    @Test
    void aLineThatIsNotJsonIsReportedWithTheLineAndTheFix() throws Exception {
        Path job = jobs.job("garbage", "metrics.py", 1, 1, Map.of("STEPS", "3", "STEP_S", "0.05", "GARBAGE", "1"), 1, 0);
        Cli r = jobs.runInProcess(job);
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.err()).contains("runjob: note: rank 0 wrote 1 line to RUNJOB_METRICS_FILE that is not one JSON object: skipped"
                + " (the first: loss=0.5 (not json)); write each line as json.dumps({...}) + \"\\n\"\n");
    }
}
