package org.runjob.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.runjob.protocol.NodeJvm;

/**
 * The agent's answer to PROBE_GPUS: {@code runjob probe gpus} in a child JVM of the agent, so that
 * JCuda's native code never runs inside the agent, with {@code CUDA_VISIBLE_DEVICES} removed and
 * {@code CUDA_DEVICE_ORDER=PCI_BUS_ID} (the driver honours both; a stray value would hide GPUs and
 * shift what indices mean), and JCuda's library unpacked where the caller says (on a node, the
 * workdir's {@code .runjob}, not a shared or noexec {@code /tmp}). The answer is the inventory's
 * line, or why there is none ({@link org.runjob.protocol.GpuInventory#fromProbe}). Local
 * nodes are probed the same way by runjob itself.
 */
public final class GpuProbeChild {

    private GpuProbeChild() {
    }

    /**
     * Runs the probe with {@code env} (less the two variables above), JCuda unpacking under
     * {@code tmpdir}; returns its line, or why there is none.
     */
    public static String run(Map<String, String> env, Path tmpdir) {
        List<String> argv = NodeJvm.argv(ProcessHandle.current().info().command().orElse("java"),
                List.of("-Djava.io.tmpdir=" + tmpdir), System.getProperty("java.class.path"), "probe", "gpus");
        ProcessBuilder pb = new ProcessBuilder(argv).redirectError(ProcessBuilder.Redirect.DISCARD);
        pb.environment().clear();
        pb.environment().putAll(env);
        pb.environment().remove("CUDA_VISIBLE_DEVICES");
        pb.environment().put("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
        try {
            Process p = pb.start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            out = out.substring(out.lastIndexOf('\n') + 1);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return "the GPU probe did not answer within 60 s";
            }
            return out;
        } catch (IOException e) {
            return "cannot start the GPU probe: " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }
}
