package org.runjob.agent.gpu;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import org.runjob.protocol.Gpu;
import org.runjob.protocol.GpuInventory;

import jcuda.CudaException;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.JCudaDriver;

/**
 * The GPU probe over JCuda's driver API: device count, then per device its name, PCI bus id, total
 * and free memory (free through a short-lived primary context), and compute capability; devices are
 * numbered in PCI bus order.
 *
 * <p>Loaded lazily and defensively: JCuda's native library links against the NVIDIA driver, so
 * on a machine without one the first touch fails with a {@link LinkageError}
 * ({@code UnsatisfiedLinkError}, later {@code NoClassDefFoundError}); that is caught once and
 * reported as "no CUDA driver". {@code CUDA_ERROR_NO_DEVICE} is a driver without a GPU.
 *
 * <p>JCuda extracts its native library to {@code java.io.tmpdir} under a fixed name and loads a
 * file already there without checking it: in a shared {@code /tmp}, another user could plant one
 * and have it run as the job's user. The probe therefore points {@code java.io.tmpdir} at a
 * directory of its own (created with a random name, mode 700, under the given temporary
 * directory) while JCuda loads, and removes it afterwards.
 */
public final class JCudaProbe {

    public GpuInventory probe() {
        Path dir;
        try {
            dir = Files.createTempDirectory("runjob-jcuda-");
        } catch (IOException | RuntimeException e) {
            return GpuInventory.none("cannot create a private directory for JCuda's native library: " + e.getMessage());
        }
        String tmp = System.getProperty("java.io.tmpdir");
        System.setProperty("java.io.tmpdir", dir.toString());
        try {
            return probeSafely();
        } finally {
            System.setProperty("java.io.tmpdir", tmp);
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    Files.deleteIfExists(f); // already mapped: deleting does not unload it
                }
                Files.deleteIfExists(dir);
            } catch (IOException e) {
                // left in the temporary directory
            }
        }
    }

    private static GpuInventory probeSafely() {
        try {
            return probeWithDriver();
        } catch (LinkageError e) {
            String m = String.valueOf(e.getMessage());
            if (m.contains("libcuda.so")) {
                return GpuInventory.none("no CUDA driver (libcuda.so.1 not found)");
            }
            return GpuInventory.none("JCuda cannot load on this node: " + m.lines().findFirst().orElse(m));
        } catch (CudaException e) {
            String m = String.valueOf(e.getMessage());
            return GpuInventory.none(m.contains("NO_DEVICE") ? "no CUDA device (the driver found no GPU)" : "CUDA error: " + m);
        } catch (RuntimeException e) {
            return GpuInventory.none("GPU probe failed: " + e);
        }
    }

    private static GpuInventory probeWithDriver() {
        JCudaDriver.setExceptionsEnabled(true);
        JCudaDriver.cuInit(0);
        int[] version = new int[1];
        JCudaDriver.cuDriverGetVersion(version);
        int[] count = new int[1];
        JCudaDriver.cuDeviceGetCount(count);
        record Found(String busId, int domain, int bus, int device, String name, long total, Free free, int major, int minor) {
        }
        List<Found> found = new ArrayList<>();
        for (int i = 0; i < count[0]; i++) {
            CUdevice dev = new CUdevice();
            JCudaDriver.cuDeviceGet(dev, i);
            byte[] name = new byte[256];
            JCudaDriver.cuDeviceGetName(name, name.length, dev);
            long[] total = new long[1];
            JCudaDriver.cuDeviceTotalMem(total, dev);
            int domain = attribute(dev, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
            int bus = attribute(dev, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
            int device = attribute(dev, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
            String busId = String.format("%08X:%02X:%02X.0", domain, bus, device);
            found.add(new Found(busId, domain, bus, device, cString(name), total[0], free(dev),
                    attribute(dev, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                    attribute(dev, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)));
        }
        found.sort(Comparator.comparingInt(Found::domain).thenComparingInt(Found::bus).thenComparingInt(Found::device));
        List<Gpu> gpus = new ArrayList<>();
        for (int i = 0; i < found.size(); i++) {
            Found f = found.get(i);
            gpus.add(new Gpu(i, f.name(), f.total(), f.free().bytes(), f.major(), f.minor(), f.busId(), f.free().unknown()));
        }
        return new GpuInventory(gpus, version[0], gpus.isEmpty() ? Optional.of("no CUDA device") : Optional.empty());
    }

    /** Free memory, or -1 and why not: reading it takes a context, which the driver may refuse. */
    private record Free(long bytes, Optional<String> unknown) {
    }

    private static Free free(CUdevice dev) {
        CUcontext ctx = new CUcontext();
        try {
            JCudaDriver.cuDevicePrimaryCtxRetain(ctx, dev);
        } catch (CudaException e) {
            return new Free(-1, Optional.of(refusal(String.valueOf(e.getMessage()))));
        }
        try {
            JCudaDriver.cuCtxSetCurrent(ctx);
            long[] free = new long[1];
            long[] total = new long[1];
            JCudaDriver.cuMemGetInfo(free, total);
            return new Free(free[0], Optional.empty());
        } catch (CudaException e) {
            return new Free(-1, Optional.of(String.valueOf(e.getMessage())));
        } finally {
            try {
                // JCuda refuses a Java null; a handle that was never set is the driver's NULL context
                JCudaDriver.cuCtxSetCurrent(new CUcontext());
                JCudaDriver.cuDevicePrimaryCtxRelease(dev);
            } catch (CudaException e) {
                // released already
            }
        }
    }

    /** Why the driver would not give the probe a context on a GPU, in words. */
    static String refusal(String error) {
        if (error.contains("CUDA_ERROR_OUT_OF_MEMORY")) {
            return "no memory left for a context: the GPU is full (" + error + ")";
        }
        if (error.contains("CUDA_ERROR_DEVICE_UNAVAILABLE") || error.contains("CUDA_ERROR_DEVICE_NOT_LICENSED")) {
            return "the GPU takes no new context: exclusive-process mode and in use, or prohibited (" + error + ")";
        }
        return "no context could be created (" + error + ")";
    }

    private static int attribute(CUdevice dev, int attribute) {
        int[] value = new int[1];
        JCudaDriver.cuDeviceGetAttribute(value, attribute, dev);
        return value[0];
    }

    private static String cString(byte[] bytes) {
        int n = 0;
        while (n < bytes.length && bytes[n] != 0) {
            n++;
        }
        return new String(bytes, 0, n, StandardCharsets.UTF_8);
    }
}
