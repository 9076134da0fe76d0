package org.runjob.agent.gpu;

import java.util.Objects;

/**
 * One GPU of a node. {@code index} is its position in PCI bus order, the order nvidia-smi uses and
 * CUDA_DEVICE_ORDER=PCI_BUS_ID gives, so it is what a job's {@code gpus} list means.
 *
 * @param freeBytes free memory, or -1 when it could not be read
 */
public record Gpu(int index, String name, long totalBytes, long freeBytes, int ccMajor, int ccMinor, String pciBusId) {
    public Gpu {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(pciBusId, "pciBusId");
    }

    public String computeCapability() {
        return ccMajor + "." + ccMinor;
    }

    /** Bytes in use by others (total - free), or -1 when free memory is unknown. */
    public long usedBytes() {
        return freeBytes < 0 ? -1 : totalBytes - freeBytes;
    }
}
