package org.runjob.logs;

import java.util.Optional;

import org.runjob.agent.ProcInfo;

/**
 * The process that runs a run (runjob's coordinator), as its run folder records it: pid, start time
 * in clock ticks since boot (so a pid the kernel gave to another process later is never taken for
 * it) and host. {@link #alive} is true only for that very process, on this host.
 */
public record Coordinator(long pid, long startTicks, String host) {

    /** This process. */
    public static Coordinator current() {
        long pid = ProcessHandle.current().pid();
        return new Coordinator(pid, startTicks(pid).orElse(-1L), ProcInfo.hostname());
    }

    public boolean alive() {
        return host.equals(ProcInfo.hostname()) && startTicks >= 0 && startTicks(pid).map(t -> t == startTicks).orElse(false);
    }

    /** Field 22 of /proc/PID/stat, when the process exists and is no zombie. */
    static Optional<Long> startTicks(long pid) {
        return ProcInfo.stat(pid).filter(s -> s.state() != 'Z').map(ProcInfo.Stat::startTicks);
    }
}
