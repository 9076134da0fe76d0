package org.runjob.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;
import org.runjob.protocol.Gpu;
import org.runjob.protocol.GpuInventory;
import org.runjob.protocol.NodeFacts;

/** The GPUs Slurm gave a step, read from its agent's HELLO: by CUDA_VISIBLE_DEVICES index, with the physical ones named. */
class SlurmGpusTest {

    @Test
    void theStepsGpusAreItsVisibleDevicesWithTheirPhysicalIndices() {
        NodeFacts facts = new NodeFacts(Map.of(NodeFacts.VISIBLE_DEVICES, "0,1", NodeFacts.variable("SLURM_STEP_GPUS"), "2,3"));
        GpuInventory inv = SlurmGpus.INSTANCE.inventory(facts);
        assertThat(inv.gpus()).extracting(Gpu::index).containsExactly(0, 1);
        assertThat(inv.gpus()).extracting(Gpu::name).containsExactly("GPU given by Slurm (physical 2)", "GPU given by Slurm (physical 3)");
        assertThat(SlurmGpus.INSTANCE.describe(facts)).isEqualTo("given by Slurm: CUDA_VISIBLE_DEVICES=0,1 (SLURM_STEP_GPUS=2,3)");
        assertThat(SlurmGpus.INSTANCE.variables()).containsExactly("SLURM_STEP_GPUS");
    }

    @Test
    void noneOrNotIndicesAreSaid() {
        assertThat(SlurmGpus.INSTANCE.inventory(new NodeFacts(Map.of(NodeFacts.VISIBLE_DEVICES, ""))).gpus()).isEmpty();
        assertThat(SlurmGpus.INSTANCE.inventory(new NodeFacts(Map.of(NodeFacts.VISIBLE_DEVICES, "GPU-1a2b"))).unavailable())
                .contains("Slurm set CUDA_VISIBLE_DEVICES=GPU-1a2b, not indices");
        assertThat(SlurmGpus.INSTANCE.noneGiven()).isEqualTo("Slurm gave the step no GPUs");
    }
}
