package org.runjob.logs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Stream;

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

    /**
     * Whether this process is runjob's coordinator of the run in {@code folder}, as far as this
     * machine can tell, before anything signals it: it is {@link #alive}, its command line runs
     * runjob ({@code org.runjob.cli.Main}, or a runjob jar), and it holds that run's
     * {@code runjob.log} (a regular file, not a link) open. A status.json someone edited to name
     * another process fails this.
     *
     * @return empty when it is; else why not
     */
    public Optional<String> notRunOf(Path folder) {
        return holdsOpen(folder.resolve(RunFolder.RUNJOB_LOG), "the run's runjob.log");
    }

    /**
     * Whether this process is a live runjob that holds {@code file} (a regular file, not a link)
     * open: the proof that a record naming it names the right process. {@code what} names the
     * file in the answer.
     *
     * @return empty when it does; else why not
     */
    public Optional<String> holdsOpen(Path file, String what) {
        if (!alive()) {
            return Optional.of("it is not running");
        }
        if (!runsRunjob()) {
            return Optional.of("its command line is not runjob's");
        }
        Path proc = Path.of("/proc", Long.toString(pid));
        try {
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
                return Optional.of(file + " is not a regular file");
            }
            Object key = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
            try (Stream<Path> fds = Files.list(proc.resolve("fd"))) {
                boolean holds = fds.anyMatch(fd -> {
                    try {
                        return key != null && key.equals(Files.readAttributes(fd, BasicFileAttributes.class).fileKey());
                    } catch (IOException e) {
                        return false;
                    }
                });
                return holds ? Optional.empty() : Optional.of("it does not hold " + what + " open");
            }
        } catch (IOException e) {
            return Optional.of("cannot read " + proc + ": " + e.getMessage());
        }
    }

    /** Whether this process is {@link #alive} and its command line runs runjob ({@code org.runjob.cli.Main}, or a runjob jar). */
    public boolean runsRunjob() {
        if (!alive()) {
            return false;
        }
        try {
            String[] argv = new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")), StandardCharsets.UTF_8).split("\0");
            return Arrays.stream(argv).anyMatch(a -> a.equals("org.runjob.cli.Main") || a.endsWith(".jar") && a.contains("runjob"));
        } catch (IOException e) {
            return false;
        }
    }

    /** Field 22 of /proc/PID/stat, when the process exists and is no zombie. */
    static Optional<Long> startTicks(long pid) {
        return ProcInfo.stat(pid).filter(s -> s.state() != 'Z').map(ProcInfo.Stat::startTicks);
    }
}
