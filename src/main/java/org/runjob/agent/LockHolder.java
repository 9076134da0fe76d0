package org.runjob.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;

/**
 * Who holds an {@code fcntl} lock on a file, from the kernel, not from anything written in the
 * file: {@code /proc/locks} names the holder's pid beside the file's device and inode (what
 * {@code F_GETLK} answers), and that process's {@code /proc} entry says whose it is and what it
 * runs. A holder this machine cannot see (another host of a network file system, another pid
 * namespace) is not found.
 */
final class LockHolder {

    private static final Path LOCKS = Path.of("/proc/locks");

    private LockHolder() {
    }

    /** The pid holding a POSIX lock on {@code file}, when this machine shows one. */
    static Optional<Long> pid(Path file) {
        try {
            long dev = ((Number) Files.getAttribute(file, "unix:dev", LinkOption.NOFOLLOW_LINKS)).longValue();
            long ino = ((Number) Files.getAttribute(file, "unix:ino", LinkOption.NOFOLLOW_LINKS)).longValue();
            // glibc's major() and minor() of st_dev; /proc/locks prints them in hex
            long major = ((dev >>> 8) & 0xfff) | ((dev >>> 32) & ~0xfffL);
            long minor = (dev & 0xff) | ((dev >>> 12) & ~0xffL);
            for (String line : Files.readAllLines(LOCKS)) {
                // "1: POSIX  ADVISORY  WRITE 4242 fd:01:1234567 0 EOF"; a waiter's line has "->"
                String[] f = line.trim().split("\\s+");
                if (f.length < 6 || line.contains("->") || !f[1].equals("POSIX")) {
                    continue;
                }
                String[] id = f[5].split(":");
                if (id.length == 3 && Long.parseLong(id[2]) == ino && Long.parseLong(id[0], 16) == major
                        && Long.parseLong(id[1], 16) == minor) {
                    long pid = Long.parseLong(f[4]);
                    return pid > 0 ? Optional.of(pid) : Optional.empty();
                }
            }
        } catch (IOException | RuntimeException e) {
            // no /proc/locks, or a line of another shape: not found
        }
        return Optional.empty();
    }

    /**
     * Process {@code pid} as a holder: "run R of job J (user U, since T)" for a runjob agent (its
     * own command line names the run), else "process P (PROGRAM) of user U, since T".
     */
    static String describe(long pid) {
        Optional<ProcessHandle> p = ProcessHandle.of(pid);
        String user;
        try {
            user = Files.getOwner(Path.of("/proc/" + pid)).getName();
        } catch (IOException | RuntimeException e) {
            user = p.flatMap(h -> h.info().user()).orElse("?");
        }
        String since = p.flatMap(h -> h.info().startInstant()).map(t -> t.truncatedTo(ChronoUnit.SECONDS)).map(Instant::toString)
                .orElse("?");
        List<String> args = p.flatMap(h -> h.info().arguments()).map(List::of).orElse(List.of());
        int run = args.indexOf("--run");
        int job = args.indexOf("--job");
        if (args.contains("agent") && run >= 0 && job >= 0 && run + 1 < args.size() && job + 1 < args.size()) {
            return "run " + args.get(run + 1) + " of job " + args.get(job + 1) + " (user " + user + ", since " + since + ")";
        }
        String program = p.flatMap(h -> h.info().command()).map(c -> Path.of(c).getFileName().toString()).orElse("?");
        return "process " + pid + " (" + program + ") of user " + user + ", since " + since;
    }
}
