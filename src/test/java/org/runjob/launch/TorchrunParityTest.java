package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.Poll;
import org.runjob.testbed.Testbed;

/** What scripts written for torchrun rely on: unbuffered Python output, torch's @record error file. */
@Tag("torch")
class TorchrunParityTest {

    @TempDir
    Path tmp;

    @Test
    void pythonPrintWithoutFlushReachesTheRankFileWhileTheWorkerRuns() throws Exception {
        LocalJobs jobs = new LocalJobs(tmp);
        Path go = tmp.resolve("go");
        Path job = jobs.job("unbuffered", "unbuffered.py", 1, 1, Map.of("GO_FILE", go.toString()), 1, 0);
        Process runjob = jobs.start(job);
        try {
            Poll.until(() -> {
                try (var runs = Files.list(jobs.logs.resolve("unbuffered"))) {
                    Path rank0 = runs.findFirst().orElseThrow().resolve("rank-0.log");
                    return Files.exists(rank0) && Files.readString(rank0).equals("ready 0\n");
                } catch (Exception e) {
                    return false;
                }
            }, Duration.ofSeconds(20), "'ready 0' in rank-0.log while the worker still runs");
            Files.writeString(go, "");
            assertThat(runjob.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(runjob.exitValue()).isZero();
        } finally {
            runjob.destroyForcibly();
        }
    }

    @Test
    void aWorkerFailingUnderRecordPutsItsExceptionAtTheTopOfTheReport() throws Exception {
        Testbed.require(Testbed.runs("/usr/bin/python3", "-c", "import torch.distributed.elastic"), "PyTorch for /usr/bin/python3 (python3-torch)");
        LocalJobs jobs = new LocalJobs(tmp);
        Path job = jobs.job("record", "record_fail.py", 1, 2, Map.of("FAIL_RANK", "1"), 1, 0);
        Cli r = jobs.runInProcess(job, "--set", "entrypoint.command=[/usr/bin/python3, record_fail.py]");
        assertThat(r.code()).as(r.err()).isEqualTo(1);
        String report = r.err().substring(r.err().indexOf("root cause:"));
        assertThat(report).startsWith("root cause: rank 1 (local rank 1) on node n1: exit 1")
                .contains("\n  error (TORCHELASTIC_ERROR_FILE): ValueError: bad batch 7 on rank 1\n  traceback:\n"
                        + "  | Traceback (most recent call last):\n")
                .contains("  |     raise ValueError(f\"bad batch {n} on rank {os.environ['RANK']}\")\n");
        assertThat(report.indexOf("error (TORCHELASTIC_ERROR_FILE)")).isLessThan(report.indexOf("stderr line"));
        String json = Files.readString(jobs.runFolder("record").resolve("error-rank-1.json"));
        assertThat(json).contains("\"message\": \"ValueError: bad batch 7 on rank 1\"");
        assertThat(jobs.runFolder("record").resolve("error-rank-0.json")).doesNotExist();
    }

    /**
     * As torchrun names the failure with the earliest timestamp: the culprit's helper holds its
     * pipes open, so its exit reaches runjob 2 s after its victims' ("Connection reset by peer"),
     * yet the report names the culprit, and not as stopped.
     */
    @Test
    void theRootCauseIsTheRankWhoseProgramEndedFirstNotWhoseReportCameFirst() throws Exception {
        Testbed.require(Testbed.runs("/usr/bin/python3", "-c", "import torch.distributed"), "PyTorch for /usr/bin/python3 (python3-torch)");
        LocalJobs jobs = new LocalJobs(tmp);
        Path job = jobs.job("culprit", "culprit.py", 2, 2, Map.of("CULPRIT", "2", "CULPRIT_CODE", "7", "LINGER_S", "4"), 5, 0);
        Cli r = jobs.runInProcess(job, "--set", "entrypoint.command=[/usr/bin/python3, culprit.py]");
        assertThat(r.code()).as(r.err()).isEqualTo(1);
        assertThat(r.err()).as(r.err()).contains("root cause: rank 2 (local rank 0) on node n2: exit 7")
                .containsPattern("(?m)^n2 +2 +0 +failed +exit 7 ");
    }
}
