package org.runjob.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * What Linux says of a process and of this host, read from /proc: one process's state, parent and
 * start time (stat fields 3, 4 and 22; the start time tells a process from a later one that got
 * its pid), its status lines (the signals it catches, its pid in its namespace), its command name,
 * and the host name. Used by the agent (its tree, its facts) and by the coordinator
 * (whether the runjob of a run folder still runs).
 */
public final class ProcInfo {

    /** A process: its state letter ('Z' for a zombie), parent and start time in clock ticks since boot. */
    public record Stat(long pid, long parent, char state, long startTicks) {
    }

    private ProcInfo() {
    }

    /** {@code pid}'s stat, if the process exists. */
    public static Optional<Stat> stat(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Optional.of(new Stat(pid, Long.parseLong(f[1]), f[0].charAt(0), Long.parseLong(f[19])));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The value of a line of {@code /proc/PID/status} ({@code SigCgt}, {@code NSpid}, ...), if the process and the line exist. */
    static Optional<String> status(long pid, String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith(field + ":")) {
                    return Optional.of(line.substring(field.length() + 1).strip());
                }
            }
        } catch (IOException e) {
            // the process ended
        }
        return Optional.empty();
    }

    /** True when {@code pid} has a handler installed for {@code signal} (its {@code SigCgt} mask). */
    static boolean catches(long pid, int signal) {
        return status(pid, "SigCgt").map(m -> Long.parseUnsignedLong(m, 16) >>> (signal - 1) & 1).orElse(0L) == 1;
    }

    /** The pid in the process's own pid namespace (the last {@code NSpid} field); {@code pid} on a kernel without namespaces. */
    static long nsPid(long pid) {
        return status(pid, "NSpid").filter(v -> v.matches("[0-9\\s]+")).map(v -> v.split("\\s+")).map(f -> Long.parseLong(f[f.length - 1])).orElse(pid);
    }

    /** The process's command name, "?" when it is gone. */
    static String comm(long pid) {
        try {
            return Files.readString(Path.of("/proc", Long.toString(pid), "comm")).strip();
        } catch (IOException e) {
            return "?";
        }
    }

    public static String hostname() {
        try {
            return Files.readString(Path.of("/proc/sys/kernel/hostname")).strip();
        } catch (IOException e) {
            return "?";
        }
    }
}
