package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.RunjobProcess;

import tools.jackson.databind.json.JsonMapper;

/** pull says when nothing it was asked for exists on any node, with exit 2, and brings what exists. */
class PullTest {

    @TempDir
    Path tmp;

    @Test
    void aPathNoNodeHasIsExitTwoNamingItAndAnExistingOneComes() throws Exception {
        LocalJobs jobs = new LocalJobs(tmp);
        Path job = jobs.job("pulled", "lines.py", 1, 1, Map.of("LINES", "1"), 2, 0);
        Cli run = jobs.runInProcess(job);
        assertThat(run.code()).as(run.err()).isZero();
        Path folder = jobs.runFolder("pulled");
        Cli missing = Cli.run(System.getenv(), "pull", folder.toString(), "path/that/does/not/exist");
        assertThat(missing.code()).as(missing.err()).isEqualTo(2);
        assertThat(missing.err()).contains("runjob: outputs of node n1: path/that/does/not/exist: no such file\n")
                .contains("runjob: nothing to pull: no node of run " + folder.getFileName() + " has path/that/does/not/exist");
        Cli present = Cli.run(System.getenv(), "pull", folder.toString(), "lines.py");
        assertThat(present.code()).as(present.err()).isZero();
        assertThat(Files.readString(folder.resolve("outputs/n1/lines.py"))).isEqualTo(Files.readString(LocalJobs.WORKERS.resolve("lines.py")));
    }

    @Test
    void nodesSharingAWorkdirBringItsOutputsOnceFromTheFirstOfThem() throws Exception {
        LocalJobs jobs = new LocalJobs(tmp);
        Path job = jobs.job("shared", "outputs.py", 2, 1, Map.of(), 2, 0);
        Files.writeString(job, Files.readString(job) + "outputs: [results]\n");
        Cli run = jobs.runInProcess(job);
        assertThat(run.code()).as(run.err()).isZero();
        Path outputs = jobs.runFolder("shared").resolve("outputs");
        try (var files = Files.list(outputs.resolve("n1/results"))) {
            assertThat(files.map(p -> p.getFileName().toString()).sorted().toList()).containsExactly("rank-0.txt", "rank-1.txt");
        }
        assertThat(outputs.resolve("n2")).doesNotExist();
        assertThat(run.err()).contains("runjob: outputs of node n2: its run directory is node n1's (a shared workdir): they are in "
                + outputs.resolve("n1") + "\n").contains("runjob: outputs: 2 files (");
        var summary = JsonMapper.builder().build().readTree(Files.readString(jobs.runFolder("shared").resolve("summary.json")));
        assertThat(summary.path("outputs").path("n2").path("shares_with").asString()).isEqualTo("n1");
    }

    @Test
    void tenThousandFilesAndA256MibSparseFileComeUnderA64MibHeapAndTheSparseOneStaysSparse() throws Exception {
        LocalJobs jobs = new LocalJobs(tmp);
        Path job = jobs.job("many", "many_outputs.py", 1, 1, Map.of("FILES", "10000", "SPARSE_MIB", "256"), 2, 0);
        Files.writeString(job, Files.readString(job) + "outputs: [out]\n");
        Process runjob = RunjobProcess.start(tmp, "many.yaml", Map.of("JAVA_TOOL_OPTIONS", "-Xmx128m -XX:+ExitOnOutOfMemoryError"),
                List.of("-XX:+UseSerialGC", "-Xmx64m", "-XX:+ExitOnOutOfMemoryError"), List.of(), job, List.of());
        assertThat(runjob.waitFor(300, TimeUnit.SECONDS)).isTrue();
        String err = Files.readString(tmp.resolve("many.yaml.err"));
        assertThat(runjob.exitValue()).as(err).isZero();
        assertThat(err).contains("runjob: outputs: 10001 files (");
        Path outputs = jobs.runFolder("many").resolve("outputs/n1");
        try (var files = Files.list(outputs.resolve("out/many"))) {
            assertThat(files.count()).isEqualTo(10_000);
        }
        assertThat(Files.readString(outputs.resolve("out/many/f009999.txt"))).isEqualTo("file 9999\n");
        Path sparse = outputs.resolve("out/sparse.bin");
        assertThat(Files.size(sparse)).isEqualTo(256L << 20);
        Process stat = new ProcessBuilder("stat", "--format=%b %B", sparse.toString()).start();
        String[] blocks = new String(stat.getInputStream().readAllBytes()).trim().split(" ");
        assertThat(Long.parseLong(blocks[0]) * Long.parseLong(blocks[1])).as("allocated bytes").isLessThan(8L << 20);
        assertThat(outputs.resolve(".incoming")).doesNotExist();
    }
}
