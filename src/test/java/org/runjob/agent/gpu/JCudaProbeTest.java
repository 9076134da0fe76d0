package org.runjob.agent.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.protocol.Gpu;
import org.runjob.protocol.GpuInventory;
import org.runjob.protocol.NodeJvm;
import org.runjob.testbed.FakeCuda;

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
    void aLibraryPlantedAtJCudasFixedTempPathIsNeverLoaded(@TempDir Path tmp) throws Exception {
        // what another user of a shared /tmp could leave there: not JCuda, so loading it would fail the probe
        Path planted = Files.copy(FakeCuda.library(), tmp.resolve("libJCudaDriver-12.6.0-linux-x86_64.so"));
        List<String> cmd = NodeJvm.argv(ProcessHandle.current().info().command().orElse("java"),
                List.of("-Djava.io.tmpdir=" + tmp), System.getProperty("java.class.path"), "probe", "gpus");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD);
        pb.environment().putAll(FakeCuda.env("NVIDIA A30|24576|0|8.0|0000:17:00"));
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).isZero();
        assertThat(out).startsWith(GpuInventory.PREFIX).endsWith("\n").hasLineCount(1);
        assertThat(GpuInventory.fromProbe(out)).isEqualTo(new GpuInventory(
                List.of(new Gpu(0, "NVIDIA A30", 24L << 30, 24L << 30, 8, 0, "00000000:17:00.0")), 12040, Optional.empty()));
        // and the private directory the probe unpacked into is gone again
        try (var left = Files.list(tmp)) {
            assertThat(left.toList()).containsExactly(planted);
        }
    }

    @Test
    void inventoriesRoundTripThroughTheProbesLine() throws Exception {
        GpuInventory inv = new GpuInventory(List.of(new Gpu(0, "Tesla V100-PCIE-16GB", 16L << 30, -1, 7, 0, "00000000:3B:00.0",
                Optional.of("the GPU is full (CUDA_ERROR_OUT_OF_MEMORY)")), new Gpu(1, "NVIDIA A30 \u00e9 | ; x", 24L << 30, 1 << 20, 8, 0,
                "00000000:17:00.0")), 12040, Optional.empty());
        assertThat(GpuInventory.fromProbe(inv.toLine())).isEqualTo(inv);
        assertThat(GpuInventory.decode(inv.encode())).isEqualTo(inv);
        assertThat(GpuInventory.fromProbe(GpuInventory.none("no CUDA driver").toLine())).isEqualTo(GpuInventory.none("no CUDA driver"));
    }

    @Test
    void aProbeLineThatIsNotAnInventoryIsNoneSayingWhy() {
        byte[] whole = new GpuInventory(List.of(new Gpu(0, "NVIDIA A30", 1, 1, 8, 0, "00000000:17:00.0")), 12040, Optional.empty()).encode();
        byte[] cut = Arrays.copyOf(whole, whole.length - 3);
        assertThat(GpuInventory.fromProbe("Error: could not find or load main class x")).isEqualTo(
                GpuInventory.none("the GPU probe failed: Error: could not find or load main class x"));
        assertThat(GpuInventory.fromProbe(GpuInventory.PREFIX + Base64.getEncoder().encodeToString(cut)).unavailable().orElseThrow())
                .startsWith("the GPU probe answered nonsense: ");
        assertThat(GpuInventory.fromProbe(GpuInventory.PREFIX + "not base64!")).isEqualTo(
                GpuInventory.none("the GPU probe answered nonsense: Illegal base64 character 20"));
        byte[] many = Arrays.copyOf(whole, whole.length);
        // the GPU count (after the format byte, the driver version and the empty reason) says a million
        many[1 + 4 + 4] = 0x00;
        many[1 + 4 + 4 + 1] = 0x0f;
        assertThat(GpuInventory.fromProbe(GpuInventory.PREFIX + Base64.getEncoder().encodeToString(many))).isEqualTo(
                GpuInventory.none("the GPU probe answered nonsense: count of 983041 GPUs"));
    }
}
