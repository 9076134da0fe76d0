package org.runjob.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.runjob.testbed.FakeCuda;
import org.runjob.testbed.OnSshTestbed;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * GPU jobs on local nodes with the stand-in driver: the real probe (JCuda over libcuda.so.1),
 * {@code runjob gpus}, the GPU preflight and {@code gpus: all} through to the workers' environment.
 * Its GPUs have the bus ids of the SSH testbed's, whose leases it would see: never beside those tests.
 */
@Execution(ExecutionMode.CONCURRENT)
@ResourceLock(OnSshTestbed.LOCK)
class StandInDriverTest {

    static final JsonMapper JSON = JsonMapper.builder().build();

    /** Listed in the driver's default order, which is not PCI bus order; one A30 is 20 GiB full. */
    static final String THREE = "NVIDIA A30|24576|20480|8.0|0000:b1:00;NVIDIA A30|24576|0|8.0|0000:3b:00;"
            + "Tesla V100-PCIE-16GB|16384|512|7.0|0000:18:00";

    @TempDir
    Path tmp;

    Map<String, String> env() throws Exception {
        Map<String, String> env = FakeCuda.env(THREE);
        env.put("FAKECUDA_LOG", tmp.resolve("driver.log").toString());
        // left in the caller's shell: the probe must still see every GPU
        env.put("CUDA_VISIBLE_DEVICES", "1");
        return env;
    }

    /** A job file named {@code name}: these node lines, this command (a YAML flow list), logs under tmp. */
    Path job(String name, String nodes, String command) throws Exception {
        return Files.writeString(tmp.resolve(name + ".yaml"), "name: " + name + "\nnodes:\n" + nodes
                + "entrypoint: {command: " + command + "}\nlogs: {dir: " + tmp.resolve("runs") + "}\n");
    }

    @Test
    void gpusPrintsEveryGpuInPciBusOrderWhateverTheCallerHides() throws Exception {
        Path job = job("g", "  - {name: box, local: true, gpus: all}\n", "[python3]");
        Cli r = Cli.run(env(), "gpus", job.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo(
                "node           index  model                             total       free  cc    bus id            held by\n"
                + "box                0  Tesla V100-PCIE-16GB           16.0 GiB   15.5 GiB  7.0   00000000:18:00.0  -\n"
                + "box                1  NVIDIA A30                     24.0 GiB   24.0 GiB  8.0   00000000:3B:00.0  -\n"
                + "box                2  NVIDIA A30                     24.0 GiB    4.0 GiB  8.0   00000000:B1:00.0  -\n");
        // every primary context the probe took, it gave back
        assertThat(Files.readString(tmp.resolve("driver.log"))).isEqualTo("retain 0\nrelease 0\nretain 1\nrelease 1\nretain 2\nrelease 2\n");
    }

    @Test
    void gpusAllStartsOneWorkerPerGpuWithEveryGpuVisibleAndFlagsTheBusyOne() throws Exception {
        Path job = job("all", "  - {name: box, local: true, gpus: all}\n", "[python3, -c, 'import os; e = os.environ; "
                + "print(e[\"RANK\"], e[\"LOCAL_RANK\"], e[\"WORLD_SIZE\"], e[\"CUDA_VISIBLE_DEVICES\"], e[\"CUDA_DEVICE_ORDER\"])']");
        Cli r = Cli.run(env(), job.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out().lines().sorted()).containsExactly(
                "[box/0] 0 0 3 0,1,2 PCI_BUS_ID", "[box/1] 1 1 3 0,1,2 PCI_BUS_ID", "[box/2] 2 2 3 0,1,2 PCI_BUS_ID");
        assertThat(r.err()).startsWith("runjob: warn box gpus: 3 of 3 1 Tesla V100-PCIE-16GB + 2 NVIDIA A30: "
                + "GPU 2 has 20.0 GiB of 24.0 GiB in use (another job?); mixed models on one node (the slowest sets the pace)\n"
                + "runjob: all run " + Cli.RUN_ID + ": 3 workers on 1 node,");
        // the run's record says what it ran on, and what preflight found
        Path run = tmp.resolve("runs/all/" + Cli.RUN_ID);
        JsonNode used = JSON.readTree(Files.readString(run.resolve("summary.json"))).get("gpus").get("box");
        assertThat(used).extracting(g -> g.get("pci_bus_id").stringValue())
                .containsExactly("00000000:18:00.0", "00000000:3B:00.0", "00000000:B1:00.0");
        assertThat(used.get(0).toString()).isEqualTo("{\"index\":0,\"name\":\"Tesla V100-PCIE-16GB\",\"total_bytes\":17179869184,"
                + "\"compute_capability\":\"7.0\",\"pci_bus_id\":\"00000000:18:00.0\"}");
        JsonNode preflight = JSON.readTree(Files.readString(run.resolve("preflight.json")));
        assertThat(preflight.get("nodes").get(0).get("checks").get("gpus").get("status").stringValue()).isEqualTo("warn");
        assertThat(preflight.get("gpus").get(0).get("gpus").get(2).get("free_bytes").longValue()).isEqualTo(4L << 30);
    }

    @Test
    void aListedGpuTheNodeDoesNotHaveIsRefusedBeforeAnythingStarts() throws Exception {
        Path job = job("four", "  - {name: box, local: true, gpus: [1, 3]}\n",
                "[python3, -c, 'open(\"" + tmp.resolve("ran") + "\", \"w\")']");
        Cli r = Cli.run(env(), job.toString());
        assertThat(r.code()).isEqualTo(3);
        assertThat(r.err()).contains("FAIL box gpus: GPU 3 does not exist on node box: it has 3 GPUs (indices 0-2)\n")
                .endsWith("preflight failed: nothing was started\n");
        assertThat(tmp.resolve("ran")).doesNotExist();
    }

    @Test
    void twoLocalNodesShareOneProbeAndTheirOwnGpus() throws Exception {
        Path job = job("two", "  - {name: a, local: true, gpus: [0]}\n  - {name: b, local: true, gpus: [1]}\n",
                "[python3, -c, 'import os; print(os.environ[\"CUDA_VISIBLE_DEVICES\"])']");
        Cli r = Cli.run(env(), job.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out().lines().sorted()).containsExactly("[a/0] 0", "[b/1] 1");
        // one probe for the machine: each GPU's context taken once, not once per node
        assertThat(Files.readAllLines(tmp.resolve("driver.log"))).filteredOn(l -> l.startsWith("retain")).hasSize(3);
        // a V100 node and an A30 node: noted, not refused
        assertThat(r.err()).startsWith("runjob: warn b gpus: 1 of 3 NVIDIA A30: model NVIDIA A30 differs from node a's Tesla V100-PCIE-16GB\n");
        // runjob gpus too: one probe for both nodes
        Files.delete(tmp.resolve("driver.log"));
        Cli gpus = Cli.run(env(), "gpus", job.toString());
        assertThat(gpus.code()).as(gpus.err()).isZero();
        assertThat(Files.readAllLines(tmp.resolve("driver.log"))).filteredOn(l -> l.startsWith("retain")).hasSize(3);
    }

    @Test
    void aGpuThatRefusesTheProbeAContextIsFlaggedWithWhy() throws Exception {
        // one A30 so full that no context fits, one in exclusive-process mode and taken by another job
        Map<String, String> env = FakeCuda.env("NVIDIA A30|24576|24576|8.0|0000:17:00|2;NVIDIA A30|24576|0|8.0|0000:31:00|46");
        env.put("FAKECUDA_LOG", tmp.resolve("driver.log").toString());
        Path job = job("taken", "  - {name: box, local: true, gpus: all}\n", "[python3, -c, 'print(1)']");
        Cli r = Cli.run(env, job.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.err()).startsWith("runjob: warn box gpus: 2 of 2 NVIDIA A30: "
                + "GPU 0: no memory left for a context: the GPU is full (CUDA_ERROR_OUT_OF_MEMORY); "
                + "GPU 1: the GPU takes no new context: exclusive-process mode and in use, or prohibited (CUDA_ERROR_DEVICE_UNAVAILABLE)\n");
        // nothing was released that was not retained
        assertThat(Files.readString(tmp.resolve("driver.log"))).isEqualTo("refused 0\nrefused 1\n");
        Cli json = Cli.run(env, "gpus", "--output", "json", job.toString());
        JsonNode gpu = JSON.readTree(json.out()).get("nodes").get(0).get("gpus").get(0);
        assertThat(gpu.get("free_bytes").longValue()).isEqualTo(-1);
        assertThat(gpu.get("free_unknown").stringValue()).isEqualTo("no memory left for a context: the GPU is full (CUDA_ERROR_OUT_OF_MEMORY)");
        assertThat(Cli.run(env, "gpus", job.toString()).out()).contains(
                "box                0  NVIDIA A30                     24.0 GiB          ?  8.0   00000000:17:00.0  -\n");
    }

    @Test
    void aDriverWithoutADeviceSaysSo() throws Exception {
        Path job = job("none", "  - {name: box, local: true, gpus: all}\n", "[python3]");
        Cli r = Cli.run(FakeCuda.env(""), "gpus", job.toString());
        assertThat(r.code()).isEqualTo(3);
        assertThat(r.out()).endsWith("box                -  no CUDA device (the driver found no GPU)\n");
    }

    @Test
    void aGpusAllSpareWithAnotherNumberOfGpusThanEveryNodeFailsCheck() throws Exception {
        Path job = job("spared", "  - {name: box, local: true, gpus: [0, 1]}\nspares:\n  - {name: wide, local: true, gpus: all}\n", "[python3, -c, 'pass']");
        Cli check = Cli.run(env(), "check", job.toString());
        assertThat(check.code()).as(check.out() + check.err()).isEqualTo(3);
        assertThat(check.out()).contains("FAIL spare wide fits no node's place: it would run 3 where a node runs 2 workers, so it can never"
                + " stand in (give it a node's number of GPUs, or workers: N)\n");
        Path fits = job("fits", "  - {name: box, local: true, gpus: [0, 1, 2]}\nspares:\n  - {name: wide, local: true, gpus: all}\n",
                "[python3, -c, 'pass']");
        Cli ok = Cli.run(env(), "check", fits.toString());
        assertThat(ok.out()).doesNotContain("fits no node");
    }
}
