package org.runjob.protocol;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What a node's probe found: its GPUs in PCI bus order, and, when there are none to be had, why
 * ("no CUDA driver", "no CUDA device", ...). The probe prints it as one line, {@value #PREFIX}
 * and the base64 of its {@link #encode binary form}: the driver version, the reason (empty: none),
 * then each GPU's index, name, total and free bytes, compute capability, PCI bus id and why its
 * free memory is unknown (empty: it is known), then each GPU's compute processes (the agent adds
 * them from NVML: the probe's child JVM lists none), in {@link Wire}'s pieces.
 *
 * @param driverVersion the CUDA driver API version (e.g. 12040), or 0 when there is no driver
 */
public record GpuInventory(List<Gpu> gpus, int driverVersion, Optional<String> unavailable, Map<Integer, List<GpuProcess>> processes) {

    /** How the probe's answer line begins. */
    public static final String PREFIX = "gpus ";
    private static final byte FORMAT = 2;

    public GpuInventory {
        gpus = List.copyOf(gpus);
        Map<Integer, List<GpuProcess>> copy = new TreeMap<>();
        processes.forEach((i, p) -> copy.put(i, List.copyOf(p)));
        processes = Collections.unmodifiableMap(copy);
    }

    /** An inventory whose GPUs run no process the driver listed (or whose driver was not asked). */
    public GpuInventory(List<Gpu> gpus, int driverVersion, Optional<String> unavailable) {
        this(gpus, driverVersion, unavailable, Map.of());
    }

    /** This inventory with the compute processes the driver lists on each GPU (by index). */
    public GpuInventory withProcesses(Map<Integer, List<GpuProcess>> found) {
        return new GpuInventory(gpus, driverVersion, unavailable, found);
    }

    /** The processes on GPU {@code index}, none when the driver listed none. */
    public List<GpuProcess> processesOn(int index) {
        return processes.getOrDefault(index, List.of());
    }

    public static GpuInventory none(String why) {
        return new GpuInventory(List.of(), 0, Optional.of(why));
    }

    public List<Integer> indices() {
        return gpus.stream().map(Gpu::index).toList();
    }

    public byte[] encode() {
        return Wire.bytes(out -> {
            out.writeByte(FORMAT);
            out.writeInt(driverVersion);
            Wire.string(out, unavailable.orElse(""));
            out.writeInt(gpus.size());
            for (Gpu g : gpus) {
                out.writeInt(g.index());
                Wire.string(out, g.name());
                out.writeLong(g.totalBytes());
                out.writeLong(g.freeBytes());
                out.writeInt(g.ccMajor());
                out.writeInt(g.ccMinor());
                Wire.string(out, g.pciBusId());
                Wire.string(out, g.freeUnknown().orElse(""));
            }
            out.writeInt(processes.size());
            for (Map.Entry<Integer, List<GpuProcess>> e : processes.entrySet()) {
                out.writeInt(e.getKey());
                out.writeInt(e.getValue().size());
                for (GpuProcess p : e.getValue()) {
                    out.writeLong(p.pid());
                    Wire.string(out, p.user());
                    Wire.string(out, p.command());
                    out.writeLong(p.usedMib());
                }
            }
        });
    }

    public static GpuInventory decode(byte[] payload) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(payload));
        int format = in.readUnsignedByte();
        if (format != FORMAT) {
            throw new IOException("GPU inventory format " + format + ", expected " + FORMAT);
        }
        int driver = in.readInt();
        Optional<String> unavailable = nonEmpty(Wire.string(in));
        // each GPU takes at least 40 bytes: a count past the payload is refused before any allocation
        int n = Wire.count(in, 40, " GPUs");
        List<Gpu> gpus = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            gpus.add(new Gpu(in.readInt(), Wire.string(in), in.readLong(), in.readLong(), in.readInt(), in.readInt(), Wire.string(in),
                    nonEmpty(Wire.string(in))));
        }
        // each GPU's list takes at least 8 bytes, each process at least 24
        int lists = Wire.count(in, 8, " GPUs' processes");
        Map<Integer, List<GpuProcess>> processes = new TreeMap<>();
        for (int i = 0; i < lists; i++) {
            int index = in.readInt();
            int m = Wire.count(in, 24, " processes");
            List<GpuProcess> on = new ArrayList<>();
            for (int k = 0; k < m; k++) {
                on.add(new GpuProcess(in.readLong(), Wire.string(in), Wire.string(in), in.readLong()));
            }
            processes.put(index, on);
        }
        if (in.available() > 0) {
            throw new IOException(in.available() + " bytes after the last GPU");
        }
        return new GpuInventory(gpus, driver, unavailable, processes);
    }

    private static Optional<String> nonEmpty(String s) {
        return s.isEmpty() ? Optional.empty() : Optional.of(s);
    }

    /** The probe's answer: {@value #PREFIX} and the base64 of {@link #encode}. */
    public String toLine() {
        return PREFIX + Base64.getEncoder().encodeToString(encode());
    }

    /** The inventory a probe answered (its line), or none, saying why. */
    public static GpuInventory fromProbe(String answer) {
        String line = answer.strip();
        if (!line.startsWith(PREFIX)) {
            return none("the GPU probe failed: " + line);
        }
        try {
            return decode(Base64.getDecoder().decode(line.substring(PREFIX.length())));
        } catch (IOException | IllegalArgumentException e) {
            return none("the GPU probe answered nonsense: " + e.getMessage());
        }
    }
}
