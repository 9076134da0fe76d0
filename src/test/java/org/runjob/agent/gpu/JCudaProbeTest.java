package org.runjob.agent.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** The real JCuda probe where there is no NVIDIA driver (CI): one clean line, no crash. */
class JCudaProbeTest {

    static boolean hasDriver() {
        return Files.exists(Path.of("/dev/nvidiactl")) || Files.exists(Path.of("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
    }

    @Test
    void withoutADriverTheProbeSaysSoAndKeepsSayingSo() {
        Assumptions.assumeFalse(hasDriver(), "this machine has an NVIDIA driver; the device check covers it");
        GpuInventory first = new JCudaProbe().probe();
        assertThat(first).isEqualTo(GpuInventory.none("no CUDA driver (libcuda.so.1 not found)"));
        // the class failed to initialise: a second touch is a NoClassDefFoundError, reported the same way
        assertThat(new JCudaProbe().probe().unavailable()).isPresent();
    }

    @Test
    void inventoriesRoundTripThroughJson() {
        GpuInventory inv = new GpuInventory(List.of(new Gpu(0, "Tesla V100-PCIE-16GB", 16L << 30, -1, 7, 0, "00000000:3B:00.0")),
                12040, Optional.empty());
        assertThat(GpuInventory.fromJson(inv.toJson())).isEqualTo(inv);
        assertThat(GpuInventory.fromJson(GpuInventory.none("no CUDA driver").toJson())).isEqualTo(GpuInventory.none("no CUDA driver"));
    }
}
