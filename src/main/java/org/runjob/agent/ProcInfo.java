package org.runjob.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * What Linux says of a process and of this host, read from /proc: one process's state, parent and
 * start time (stat fields 3, 4 and 22; the start time tells a process from a later one that got
 * its pid), and the host name. Used by the agent (its tree, its facts) and by the coordinator
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

    public static String hostname() {
        try {
            return Files.readString(Path.of("/proc/sys/kernel/hostname")).strip();
        } catch (IOException e) {
            return "?";
        }
    }
}
