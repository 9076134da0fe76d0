package org.runjob.preflight;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

import org.junit.jupiter.api.Test;
import org.runjob.protocol.Gpu;
import org.runjob.protocol.GpuInventory;
import org.runjob.spec.NodeAddress;
import org.runjob.spec.NodeSpec;

/** GPU preflight rules against given inventories (no GPU needed). */
class GpuCheckTest {

    static final long GIB = 1L << 30;

    static NodeSpec node(NodeSpec.GpuRequest gpus) {
        return new NodeSpec("a30", new NodeAddress.Ssh("h", OptionalInt.empty(), Optional.empty()), gpus, OptionalInt.of(1),
                Optional.empty(), Map.of());
    }

    static GpuInventory three(long freeOfFirst) {
        return new GpuInventory(List.of(
                new Gpu(0, "NVIDIA A30", 24 * GIB, freeOfFirst, 8, 0, "00000000:17:00.0"),
                new Gpu(1, "NVIDIA A30", 24 * GIB, 24 * GIB - (100L << 20), 8, 0, "00000000:31:00.0"),
                new Gpu(2, "NVIDIA A30", 24 * GIB, 24 * GIB, 8, 0, "00000000:B1:00.0")), 12040, Optional.empty());
    }

    @Test
    void anIndexBeyondTheInventoryFailsNamingTheNode() {
        Cell c = GpuCheck.judge(node(new NodeSpec.GpuRequest.Listed(List.of(2, 4))), three(24 * GIB), Optional.empty(), "");
        assertThat(c).isEqualTo(Cell.fail("GPU 4 does not exist on node a30: it has 3 GPUs (indices 0-2)"));
    }

    @Test
    void aBusyGpuIsAWarningWithHowMuchIsUsed() {
        Cell c = GpuCheck.judge(node(new NodeSpec.GpuRequest.Listed(List.of(0, 1))), three(4 * GIB), Optional.empty(), "");
        assertThat(c).isEqualTo(Cell.warn("2 of 3 NVIDIA A30: GPU 0 has 20.0 GiB of 24.0 GiB in use (another job?)"));
    }

    @Test
    void noDriverFailsAGpuNode() {
        GpuInventory none = GpuInventory.none("no CUDA driver (libcuda.so.1 not found)");
        assertThat(GpuCheck.judge(node(new NodeSpec.GpuRequest.All()), none, Optional.empty(), ""))
                .isEqualTo(Cell.fail("gpus: all, but no CUDA driver (libcuda.so.1 not found)"));
        assertThat(GpuCheck.judge(node(new NodeSpec.GpuRequest.Listed(List.of(1, 2))), none, Optional.empty(), ""))
                .isEqualTo(Cell.fail("lists GPUs [1, 2], but no CUDA driver (libcuda.so.1 not found)"));
    }

    @Test
    void allUsesEveryGpuAndMixedModelsAreNoted() {
        Cell c = GpuCheck.judge(node(new NodeSpec.GpuRequest.All()), three(24 * GIB), Optional.of("Tesla V100-PCIE-16GB"), "v100");
        assertThat(c).isEqualTo(Cell.warn("3 of 3 NVIDIA A30: model NVIDIA A30 differs from node v100's Tesla V100-PCIE-16GB"));
        assertThat(GpuCheck.judge(node(new NodeSpec.GpuRequest.All()), three(24 * GIB), Optional.empty(), ""))
                .isEqualTo(Cell.ok("3 of 3 NVIDIA A30"));
    }

    @Test
    void cpuNodesAreNotProbed() {
        assertThat(GpuCheck.wantsGpus(node(new NodeSpec.GpuRequest.Listed(List.of())))).isFalse();
        assertThat(GpuCheck.wantsGpus(node(new NodeSpec.GpuRequest.Listed(List.of(0))))).isTrue();
        assertThat(GpuCheck.wantsGpus(node(new NodeSpec.GpuRequest.All()))).isTrue();
    }
}
