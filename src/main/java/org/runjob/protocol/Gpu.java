package org.runjob.protocol;

import java.util.Objects;
import java.util.Optional;

/**
 * One GPU of a node. {@code index} is its position in PCI bus order, the order nvidia-smi uses and
 * CUDA_DEVICE_ORDER=PCI_BUS_ID gives, so it is what a job's {@code gpus} list means.
 *
 * @param freeBytes free memory, or -1 when it could not be read
 * @param freeUnknown why free memory could not be read (the driver refused the probe a context:
 *        the GPU is full, or in exclusive-process mode and taken), when {@code freeBytes} is -1
 */
public record Gpu(int index, String name, long totalBytes, long freeBytes, int ccMajor, int ccMinor, String pciBusId,
                  Optional<String> freeUnknown) {
    public Gpu {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(pciBusId, "pciBusId");
        Objects.requireNonNull(freeUnknown, "freeUnknown");
    }

    /** A GPU whose free memory was read (or is simply unknown, without a reason). */
    public Gpu(int index, String name, long totalBytes, long freeBytes, int ccMajor, int ccMinor, String pciBusId) {
        this(index, name, totalBytes, freeBytes, ccMajor, ccMinor, pciBusId, Optional.empty());
    }

    public String computeCapability() {
        return ccMajor + "." + ccMinor;
    }

    /** Bytes in use by others (total - free), or -1 when free memory is unknown. */
    public long usedBytes() {
        return freeBytes < 0 ? -1 : totalBytes - freeBytes;
    }
}
