package org.runjob.logs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The process that runs a run (runjob's coordinator), as its run folder records it: pid, start time
 * in clock ticks since boot (so a pid the kernel gave to another process later is never taken for
 * it) and host. {@link #alive} is true only for that very process, on this host.
 */
public record Coordinator(long pid, long startTicks, String host) {

    /** This process. */
    public static Coordinator current() {
        long pid = ProcessHandle.current().pid();
        return new Coordinator(pid, startTicks(pid).orElse(-1L), hostname());
    }

    public boolean alive() {
        return host.equals(hostname()) && startTicks >= 0 && startTicks(pid).map(t -> t == startTicks).orElse(false);
    }

    /** Field 22 of /proc/PID/stat, when the process exists and is no zombie. */
    static Optional<Long> startTicks(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return f[0].equals("Z") ? Optional.empty() : Optional.of(Long.parseLong(f[19]));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    static String hostname() {
        try {
            return Files.readString(Path.of("/proc/sys/kernel/hostname")).strip();
        } catch (IOException e) {
            return "?";
        }
    }
}
