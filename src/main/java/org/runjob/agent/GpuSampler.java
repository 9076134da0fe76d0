package org.runjob.agent;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;
import org.runjob.protocol.GpuProcess;
import org.runjob.protocol.WorkerStart;

/**
 * This node's GPUs, sampled through the driver's NVML ({@code libnvidia-ml.so.1}, through JNA: no
 * process is started, so a sample costs a few library calls) every interval while the workers run.
 * Each sample is one JSON line, {@code {"time", "gpus": [{"index", "utilization_pct",
 * "memory_used_mib", "memory_total_mib", "power_w", "temperature_c", "sm_clock_mhz", "ranks",
 * "processes": [{"pid", "user", "command", "used_mib"}], "held_by"}]}} ({@code processes} only on a GPU the driver lists
 * any on, {@code held_by} only where asked and leased),
 * a value the GPU does not report (NVML_ERROR_NOT_SUPPORTED: no power sensor) or could not read
 * {@code null}; {@code ranks} are the workers that use that GPU by their CUDA_VISIBLE_DEVICES and
 * LOCAL_RANK ({@link #ranksByGpu}; NVML numbers GPUs in PCI bus order, as runjob's indices do). A node without the driver sends one line
 * {@code {"time", "none": WHY}} and no samples. Written by hand, not with a JSON library: the agent
 * loads none (it cost every agent about 200 ms of start-up).
 */
final class GpuSampler {

    static final String LIBRARY = "libnvidia-ml.so.1";
    private static final int TEMPERATURE_GPU = 0;
    private static final int CLOCK_SM = 1;

    /** The NVML calls runjob makes. */
    interface Nvml extends Library {
        int nvmlInit_v2();

        int nvmlDeviceGetCount_v2(IntByReference count);

        int nvmlDeviceGetHandleByIndex_v2(int index, PointerByReference device);

        /** nvmlUtilization_t: {unsigned gpu, memory} percent. */
        int nvmlDeviceGetUtilizationRates(Pointer device, int[] utilization);

        /** nvmlMemory_t: {unsigned long long total, free, used} bytes. */
        int nvmlDeviceGetMemoryInfo(Pointer device, long[] memory);

        int nvmlDeviceGetPowerUsage(Pointer device, IntByReference milliwatts);

        int nvmlDeviceGetTemperature(Pointer device, int sensor, IntByReference celsius);

        int nvmlDeviceGetClockInfo(Pointer device, int type, IntByReference mhz);

        /** nvmlProcessInfo_t[count] into {@code infos}; with too small a count, NVML_ERROR_INSUFFICIENT_SIZE and the count needed. */
        int nvmlDeviceGetComputeRunningProcesses_v3(Pointer device, IntByReference count, Pointer infos);
    }

    private final Nvml nvml;
    private final List<Pointer> devices;
    private final Map<Integer, List<Integer>> ranks;

    private GpuSampler(Nvml nvml, List<Pointer> devices, Map<Integer, List<Integer>> ranks) {
        this.nvml = nvml;
        this.devices = devices;
        this.ranks = ranks;
    }

    /**
     * Samples every {@code intervalMillis} until the agent exits, each line to {@code send}; a node
     * without NVML gets one {@code none} line. Runs on a daemon thread of its own.
     */
    static void start(long intervalMillis, List<WorkerStart> workers, Consumer<String> send) {
        start(intervalMillis, workers, Map::of, send);
    }

    /**
     * As {@link #start(long, List, Consumer)}, each GPU's line also naming the runjob run that
     * holds its lease ({@code held_by}, from {@code holders}: GPU index to holder, asked at each sample).
     */
    static void start(long intervalMillis, List<WorkerStart> workers, Supplier<Map<Integer, String>> holders, Consumer<String> send) {
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "gpu-sampler");
            t.setDaemon(true);
            return t;
        });
        timer.execute(() -> {
            Object opened = open(workers);
            if (opened instanceof String why) {
                send.accept("{\"time\":\"" + Instant.now() + "\",\"none\":" + quoted(why) + "}");
                timer.shutdown();
                return;
            }
            GpuSampler sampler = (GpuSampler) opened;
            timer.scheduleAtFixedRate(() -> send.accept(sampler.sample(holders.get())), 0, intervalMillis, TimeUnit.MILLISECONDS);
        });
    }

    /** The compute processes on each of this machine's GPUs; none without NVML. */
    static Map<Integer, List<GpuProcess>> processes() {
        return open(List.of()) instanceof GpuSampler s ? GpuProcesses.list(s.nvml, s.devices) : Map.of();
    }

    /** The sampler, or why there is none (a String). */
    static Object open(List<WorkerStart> workers) {
        if (!NvmlPresence.possible()) {
            return "no NVIDIA driver here (" + LIBRARY + " is not where the loader looks)";
        }
        Nvml nvml;
        try {
            nvml = Native.load(LIBRARY, Nvml.class);
        } catch (LinkageError | RuntimeException e) {
            return "no NVIDIA driver here (" + LIBRARY + " cannot be loaded)";
        }
        int r = nvml.nvmlInit_v2();
        if (r != 0) {
            return "NVML did not start (nvmlInit_v2 returned " + r + ")";
        }
        IntByReference count = new IntByReference();
        if (nvml.nvmlDeviceGetCount_v2(count) != 0 || count.getValue() == 0) {
            return "NVML counts no GPU";
        }
        List<Pointer> devices = new ArrayList<>();
        for (int i = 0; i < count.getValue(); i++) {
            PointerByReference d = new PointerByReference();
            devices.add(nvml.nvmlDeviceGetHandleByIndex_v2(i, d) == 0 ? d.getValue() : null);
        }
        return new GpuSampler(nvml, devices, ranksByGpu(workers));
    }

    /**
     * Each GPU index's ranks, from the workers' CUDA_VISIBLE_DEVICES (a list of indices; anything
     * else maps none) as torchrun's convention has workers use it: every worker of a node sees the
     * node's GPUs and takes the LOCAL_RANK-th ({@code torch.cuda.set_device(LOCAL_RANK)}) when it
     * sees one per local worker; a worker that sees one GPU uses that one; otherwise it is counted
     * on every GPU it sees.
     */
    static Map<Integer, List<Integer>> ranksByGpu(List<WorkerStart> workers) {
        Map<Integer, TreeSet<Integer>> out = new TreeMap<>();
        for (WorkerStart w : workers) {
            String visible = w.env().getOrDefault("CUDA_VISIBLE_DEVICES", "");
            if (!visible.matches("\\d+(,\\d+)*")) {
                continue;
            }
            List<String> gpus = List.of(visible.split(","));
            int local = parsed(w.env().get("LOCAL_RANK"));
            if (gpus.size() > 1 && gpus.size() == parsed(w.env().get("LOCAL_WORLD_SIZE")) && local >= 0 && local < gpus.size()) {
                gpus = List.of(gpus.get(local));
            }
            for (String g : gpus) {
                out.computeIfAbsent(Integer.parseInt(g), k -> new TreeSet<>()).add(w.rank());
            }
        }
        Map<Integer, List<Integer>> lists = new TreeMap<>();
        out.forEach((g, r) -> lists.put(g, List.copyOf(r)));
        return lists;
    }

    private static int parsed(String number) {
        try {
            return number == null ? -1 : Integer.parseInt(number);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** One sample of every GPU, as its JSON line; {@code holders}: the runjob run that holds a GPU's lease, by index. */
    String sample(Map<Integer, String> holders) {
        Map<Integer, List<GpuProcess>> processes = GpuProcesses.list(nvml, devices);
        StringBuilder b = new StringBuilder("{\"time\":\"").append(Instant.now()).append("\",\"gpus\":[");
        for (int i = 0; i < devices.size(); i++) {
            Pointer d = devices.get(i);
            if (i > 0) {
                b.append(',');
            }
            b.append("{\"index\":").append(i);
            int[] util = new int[2];
            long[] mem = new long[3];
            IntByReference power = new IntByReference();
            IntByReference temp = new IntByReference();
            IntByReference clock = new IntByReference();
            boolean ok = d != null;
            b.append(",\"utilization_pct\":").append(ok && nvml.nvmlDeviceGetUtilizationRates(d, util) == 0 ? Integer.toUnsignedString(util[0]) : "null");
            boolean memory = ok && nvml.nvmlDeviceGetMemoryInfo(d, mem) == 0;
            b.append(",\"memory_used_mib\":").append(memory ? Long.toString(mem[2] >> 20) : "null");
            b.append(",\"memory_total_mib\":").append(memory ? Long.toString(mem[0] >> 20) : "null");
            b.append(",\"power_w\":").append(ok && nvml.nvmlDeviceGetPowerUsage(d, power) == 0
                    ? Double.toString(Integer.toUnsignedLong(power.getValue()) / 1000.0) : "null");
            b.append(",\"temperature_c\":").append(ok && nvml.nvmlDeviceGetTemperature(d, TEMPERATURE_GPU, temp) == 0
                    ? Integer.toUnsignedString(temp.getValue()) : "null");
            b.append(",\"sm_clock_mhz\":").append(ok && nvml.nvmlDeviceGetClockInfo(d, CLOCK_SM, clock) == 0
                    ? Integer.toUnsignedString(clock.getValue()) : "null");
            b.append(",\"ranks\":").append(ranks.getOrDefault(i, List.of()).toString().replace(" ", ""));
            List<GpuProcess> on = processes.getOrDefault(i, List.of());
            if (!on.isEmpty()) {
                b.append(",\"processes\":[");
                for (int k = 0; k < on.size(); k++) {
                    GpuProcess p = on.get(k);
                    b.append(k > 0 ? "," : "").append("{\"pid\":").append(p.pid()).append(",\"user\":").append(quoted(p.user()))
                            .append(",\"command\":").append(quoted(p.command())).append(",\"used_mib\":")
                            .append(p.usedMib() >= 0 ? Long.toString(p.usedMib()) : "null").append('}');
                }
                b.append(']');
            }
            if (holders.containsKey(i)) {
                b.append(",\"held_by\":").append(quoted(holders.get(i)));
            }
            b.append('}');
        }
        return b.append("]}").toString();
    }

    /** {@code text} as a JSON string. */
    static String quoted(String text) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
