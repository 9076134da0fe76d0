package org.runjob.testbed;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import org.runjob.agent.ProcTable;

/** Worker pids the test workers write ({@code PREFIX-RANK.pid}), and whether they still run. */
public final class Pids {

    private Pids() {
    }

    /** Waits until {@code prefix-0.pid ... prefix-(n-1).pid} exist in {@code dir} and returns their pids. */
    public static List<Long> await(Path dir, String prefix, int n, Duration timeout) {
        Poll.until(() -> IntStream.range(0, n).allMatch(r -> readable(dir.resolve(prefix + "-" + r + ".pid"))),
                timeout, n + " " + prefix + " pid files");
        List<Long> out = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            out.add(read(dir.resolve(prefix + "-" + r + ".pid")));
        }
        return out;
    }

    /** The pids of {@code pids} that still run (zombies do not). */
    public static List<Long> living(List<Long> pids) {
        return pids.stream().filter(ProcTable::running).toList();
    }

    public static void awaitGone(List<Long> pids, Duration timeout, String what) {
        Poll.until(() -> living(pids).isEmpty(), timeout, what + " (alive: " + living(pids) + " when the wait began)");
    }

    /** Kills whatever a failed test left behind, so one failure does not leak into the next test. */
    public static void killAll(List<Long> pids) {
        pids.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
    }

    /** Each living pid's /proc stat line (state, parent, ...), for a failure message. */
    public static String describe(List<Long> pids) {
        StringBuilder b = new StringBuilder();
        for (long pid : living(pids)) {
            try {
                b.append("[").append(Files.readString(Path.of("/proc", Long.toString(pid), "stat")).strip()).append("] ");
            } catch (IOException e) {
                b.append("[").append(pid).append(" gone] ");
            }
        }
        return b.toString();
    }

    /** The parent of a worker: its agent (workers are exec'd in place by setsid). */
    public static long parentOf(long pid) throws Exception {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        return Long.parseLong(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[1]);
    }

    /** The watchdog's list of the agent's processes ({@code RUNJOB_AGENT_STATE/procs} of the agent's environment). */
    public static Path registryOf(long agent) throws Exception {
        for (String kv : Files.readString(Path.of("/proc", Long.toString(agent), "environ")).split("\u0000")) {
            if (kv.startsWith("RUNJOB_AGENT_STATE=")) {
                return Path.of(kv.substring("RUNJOB_AGENT_STATE=".length()), "procs");
            }
        }
        throw new AssertionError("agent " + agent + " has no RUNJOB_AGENT_STATE");
    }

    public static List<Long> recorded(Path registry) {
        try {
            return Files.readAllLines(registry).stream().map(l -> Long.parseLong(l.split(" ")[0])).toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    private static boolean readable(Path file) {
        try {
            read(file);
            return true;
        } catch (IllegalStateException e) {
            return false;
        }
    }

    private static long read(Path file) {
        try {
            return Long.parseLong(Files.readString(file).trim());
        } catch (IOException | NumberFormatException e) {
            throw new IllegalStateException("no pid in " + file, e);
        }
    }
}
