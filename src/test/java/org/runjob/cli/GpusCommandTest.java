package org.runjob.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** runjob gpus and the GPU preflight on a machine without an NVIDIA driver (CI). */
class GpusCommandTest {

    @TempDir
    Path tmp;

    static void requireNoDriver() {
        Assumptions.assumeFalse(Files.exists(Path.of("/dev/nvidiactl")), "this machine has an NVIDIA driver");
    }

    @Test
    void gpusOnALocalJobWithoutADriverSaysSoAndExitsThree() throws Exception {
        requireNoDriver();
        Path job = Files.writeString(tmp.resolve("g.yaml"), "name: g\nnodes:\n  - {name: box, local: true, gpus: [0]}\n"
                + "  - {name: cpu, local: true, workers: 1}\nentrypoint: {command: [python3]}\n");
        Cli r = Cli.run(System.getenv(), "gpus", job.toString());
        assertThat(r.code()).isEqualTo(3);
        assertThat(r.out()).isEqualTo(
                "node           index  model                             total       free  cc    bus id            held by\n"
                + "box                -  no CUDA driver (libcuda.so.1 not found)\n"
                + "cpu                -  no CUDA driver (libcuda.so.1 not found)\n");
    }

    @Test
    void gpusOfNodesGivenAsACountOutsideAnAllocationAsksNoNodeAndSaysWhy() throws Exception {
        Path job = Files.writeString(tmp.resolve("c.yaml"), "name: c\nbackend: slurm\nnodes:\n  - {count: 2, workers: 1}\n"
                + "entrypoint: {command: [python3]}\n");
        for (String command : List.of("gpus", "check")) {
            Cli r = Cli.run(Map.of("PATH", "/nonexistent"), command, job.toString());
            assertThat(r.code()).as(command).isEqualTo(3);
            assertThat(r.out()).as(command).isEmpty();
            assertThat(r.err()).as(command).isEqualTo("runjob: the job's 2 nodes are given as a count, and Slurm names them when it allocates"
                    + " them: queue the run with `runjob submit`, or run runjob inside an allocation (salloc --nodes=2)\n");
        }
    }

    @Test
    void gpusAllOnANodeWithoutGpusFailsPreflightAndStartsNothing() throws Exception {
        requireNoDriver();
        Path job = Files.writeString(tmp.resolve("all.yaml"), "name: all\nnodes:\n  - {name: box, local: true, gpus: all, workers: 1}\n"
                + "entrypoint: {command: [python3, -c, 'open(\"" + tmp.resolve("ran") + "\", \"w\")']}\n"
                + "logs: {dir: " + tmp.resolve("runs") + "}\n");
        Cli r = Cli.run(System.getenv(), job.toString());
        assertThat(r.code()).isEqualTo(3);
        assertThat(r.err()).contains("FAIL box gpus: gpus: all, but no CUDA driver (libcuda.so.1 not found)\n")
                .contains("preflight failed: nothing was started\n");
        assertThat(tmp.resolve("ran")).doesNotExist();
    }

    @Test
    void aCpuJobNeverNeedsTheProbe() throws Exception {
        Path job = Files.writeString(tmp.resolve("cpu.yaml"), "name: cpu\nnodes:\n  - {name: box, local: true, workers: 1}\n"
                + "entrypoint: {command: [python3, -c, 'print(7)']}\nlogs: {dir: " + tmp.resolve("runs") + "}\n");
        Cli r = Cli.run(System.getenv(), job.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("[box/0] 7\n");
    }

    @Test
    void aDryRunOfGpusAllShowsAllGpusFoundAtLaunch() throws Exception {
        Path job = Files.writeString(tmp.resolve("d.yaml"), "name: d\nnodes:\n  - {name: box, host: gpu.example.org, gpus: all, workers: 2}\n"
                + "entrypoint: {command: [python3]}\n");
        Cli r = Cli.run("--dry-run", job.toString());
        assertThat(r.code()).isZero();
        assertThat(r.out()).contains("  CUDA_VISIBLE_DEVICES  <all GPUs found at launch>\n");
    }
}
