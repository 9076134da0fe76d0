package org.runjob.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import org.runjob.protocol.GpuProcess;

/**
 * The compute processes the driver lists on each GPU ({@code nvmlDeviceGetComputeRunningProcesses_v3}),
 * each named by {@code /proc}: the user who owns it and its command line (cut at
 * {@value #COMMAND_CHARS} characters). A driver older than that call lists none.
 */
final class GpuProcesses {

    static final int COMMAND_CHARS = 200;
    /** nvmlProcessInfo_t: pid (uint32), 4 bytes of padding, usedGpuMemory (uint64), two uint32 instance ids. */
    private static final int INFO_BYTES = 24;
    private static final int INSUFFICIENT_SIZE = 7;
    private static final long NOT_AVAILABLE = -1L; // NVML_VALUE_NOT_AVAILABLE: ULLONG_MAX

    private GpuProcesses() {
    }

    /** Each GPU index's processes; GPUs with none are left out. */
    static Map<Integer, List<GpuProcess>> list(GpuSampler.Nvml nvml, List<Pointer> devices) {
        Map<Integer, List<GpuProcess>> out = new TreeMap<>();
        for (int i = 0; i < devices.size(); i++) {
            List<GpuProcess> on = on(nvml, devices.get(i));
            if (!on.isEmpty()) {
                out.put(i, on);
            }
        }
        return out;
    }

    private static List<GpuProcess> on(GpuSampler.Nvml nvml, Pointer device) {
        List<GpuProcess> out = new ArrayList<>();
        if (device == null) {
            return out;
        }
        try {
            IntByReference count = new IntByReference(0);
            int r = nvml.nvmlDeviceGetComputeRunningProcesses_v3(device, count, null);
            if (r == INSUFFICIENT_SIZE && count.getValue() > 0) {
                int room = count.getValue() + 8; // processes may start between the two calls
                Memory infos = new Memory((long) room * INFO_BYTES);
                count.setValue(room);
                r = nvml.nvmlDeviceGetComputeRunningProcesses_v3(device, count, infos);
                if (r == 0) {
                    for (int k = 0; k < Math.min(count.getValue(), room); k++) {
                        long pid = Integer.toUnsignedLong(infos.getInt((long) k * INFO_BYTES));
                        long used = infos.getLong((long) k * INFO_BYTES + 8);
                        out.add(named(pid, used == NOT_AVAILABLE ? -1 : used >>> 20));
                    }
                }
            }
        } catch (UnsatisfiedLinkError e) {
            // a driver older than R470: no process list
        }
        return out;
    }

    /** The process with its owner and command line as {@code /proc} shows them ({@code ?} for what it hides). */
    static GpuProcess named(long pid, long usedMib) {
        Path proc = Path.of("/proc", Long.toString(pid));
        String user;
        try {
            user = Files.getOwner(proc).getName();
        } catch (IOException | RuntimeException e) {
            user = "?";
        }
        String command;
        try {
            byte[] raw = Files.readAllBytes(proc.resolve("cmdline"));
            command = new String(raw, StandardCharsets.UTF_8).replace('\0', ' ').strip();
            if (command.isEmpty()) {
                command = ProcInfo.comm(pid);
            }
        } catch (IOException | RuntimeException e) {
            command = "?";
        }
        if (command.length() > COMMAND_CHARS) {
            command = command.substring(0, COMMAND_CHARS) + "...";
        }
        return new GpuProcess(pid, user, command, usedMib);
    }
}
