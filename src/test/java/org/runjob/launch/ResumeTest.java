package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.RunjobProcess;
import org.runjob.testbed.Testbed;

/** jobs/resume.yaml with real PyTorch: a rank fails, the group restarts and resumes from rank 0's snapshot. */
@Tag("torch")
class ResumeTest {

    @TempDir
    Path tmp;

    @Test
    void aFailedEpochRestartsTheGroupWhichResumesFromTheSnapshotOfThisRunOnly() throws Exception {
        Testbed.require(Testbed.runs(DdpTest.PYTHON, "-c", "import torch.distributed"), "PyTorch for " + DdpTest.PYTHON + " (python3-torch)");
        List<String> common = List.of("--set", "entrypoint.command=[" + DdpTest.PYTHON + ", train.py]", "--set", "workdir=" + tmp.resolve("work"),
                "--set", "logs.dir=" + tmp.resolve("runs"));
        String[] failing = args(common, "--set", "env.FAIL_AT_EPOCH=2", "jobs/resume.yaml");
        Cli r = Cli.run(System.getenv(), failing);
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("[local1/1] rank 1 fails at epoch 2\n");
        for (int rank = 0; rank < 4; rank++) {
            String node = rank < 2 ? "local1" : "local2";
            assertThat(r.out()).contains("[" + node + "/" + rank + "#1] rank " + rank + " attempt 1 resumed at epoch 2\n")
                    .contains("[" + node + "/" + rank + "#1] rank " + rank + " attempt 1 finished epoch 4\n")
                    .doesNotContain("[" + node + "/" + rank + "#1] rank " + rank + " attempt 1 finished epoch 1\n");
        }
        assertThat(r.err()).contains("succeeded after 2 attempts");

        // the run worked in a directory of its own, where its snapshot stays
        assertThat(tmp.resolve("work/runs").resolve(Cli.RUN_ID).resolve("snapshot.pt")).isRegularFile();
        // a next run told to work in that very directory (its own run id: a runjob of its own, with the real clock)
        // finds the last run's snapshot and does not resume it
        Path next = Files.writeString(tmp.resolve("next.yaml"), "extends: " + Path.of("jobs/resume.yaml").toAbsolutePath() + "\n"
                + "entrypoint: {command: [" + DdpTest.PYTHON + ", train.py]}\nworkdir: " + tmp.resolve("work/runs").resolve(Cli.RUN_ID) + "\n"
                + "runs_share_workdir: true\n"
                + "logs: {dir: " + tmp.resolve("runs2") + "}\nfailure: {grace_period_s: 5, max_restarts: 0}\n");
        Process again = RunjobProcess.start(tmp, next);
        assertThat(again.waitFor(120, TimeUnit.SECONDS)).isTrue();
        String out = Files.readString(tmp.resolve("next.yaml.out"));
        assertThat(again.exitValue()).as(out).isZero();
        assertThat(out).contains("[local1/0] rank 0 attempt 0 ignored a snapshot of run " + Cli.RUN_ID + "\n")
                .contains("[local1/0] rank 0 attempt 0 finished epoch 0\n");
    }

    private static String[] args(List<String> common, String... more) {
        List<String> all = new ArrayList<>(common);
        all.addAll(List.of(more));
        return all.toArray(String[]::new);
    }
}
