package org.runjob.preflight;

import java.nio.file.Path;
import java.util.Map;
import java.util.function.Supplier;

import org.runjob.agent.GpuProbeChild;
import org.runjob.agent.gpu.GpuInventory;

/**
 * This machine's GPUs for local nodes, by running {@code runjob probe gpus} as a child process, so
 * that JCuda's native code never runs inside runjob itself (remote nodes are probed by their
 * agents: {@link org.runjob.launch.NodeSession#gpus}).
 *
 * <p>The probe runs without {@code CUDA_VISIBLE_DEVICES} and with
 * {@code CUDA_DEVICE_ORDER=PCI_BUS_ID}: the driver itself honours both, and a value left in the
 * user's shell (or set by a login script on the node) would hide GPUs from the probe and shift
 * the indices a job's {@code gpus} list means.
 */
public final class GpuInventories {

    private GpuInventories() {
    }

    /**
     * This machine's inventory, probed on the first {@code get} only: local nodes share the
     * machine, so however many of them ask, one probe answers all.
     */
    public static Supplier<GpuInventory> localOnce(Map<String, String> env) {
        return new Supplier<>() {
            private GpuInventory found;

            @Override
            public synchronized GpuInventory get() {
                if (found == null) {
                    found = local(env);
                }
                return found;
            }
        };
    }

    /** Probes this machine, with {@code env} as the probe's environment (less the two above). */
    public static GpuInventory local(Map<String, String> env) {
        return GpuInventory.fromProbe(GpuProbeChild.run(env, Path.of(System.getProperty("java.io.tmpdir"))));
    }
}
