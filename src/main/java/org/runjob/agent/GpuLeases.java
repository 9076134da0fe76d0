package org.runjob.agent;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.runjob.protocol.Lease;

/**
 * GPU leases on this machine: one file per GPU (by PCI bus id) in a directory every user shares
 * ({@value #DEFAULT_DIR}, mode 1777 like /tmp), and an advisory lock ({@code fcntl}) on it held by
 * the agent of the run that uses the GPU, until that node's workers are gone. A lease dies with its
 * holder: when the agent exits, is killed, or its machine reboots, the kernel drops the lock;
 * nothing needs cleaning up. The lock alone decides, and names its holder: the kernel says
 * which process holds it ({@link LockHolder}); the file's text ("run R of job J (user U, since
 * T)"), which anyone can write, is shown only for a holder this machine cannot see.
 *
 * <p>Requests ({@link Lease.Request}): {@code PICK} leases the first N of the GPUs it can, in the
 * order given, and answers each as leased (or, when fewer than N were free, releases them again);
 * {@code HOLD} tries every one; {@code QUERY} leases nothing. A GPU another run holds is answered
 * with its holder; a free one under a query as free.
 */
public final class GpuLeases {

    static final String VARIABLE = "RUNJOB_GPU_LEASES";
    static final String DEFAULT_DIR = "/tmp/runjob-gpu-leases";
    private static final int STICKY_WORLD_WRITABLE = 01777;

    private final Path dir;
    /** Bus id to the open, locked lease file: held until this process ends. */
    private final Map<String, FileChannel> held = new LinkedHashMap<>();

    GpuLeases(Map<String, String> env) {
        this.dir = Path.of(env.getOrDefault(VARIABLE, DEFAULT_DIR));
    }

    /** Answers one request (see the class comment); an error when leases cannot be taken safely here. */
    synchronized Lease.Answer handle(Lease.Request request) {
        try {
            checkDir();
        } catch (IOException e) {
            return Lease.Answer.failed(e.getMessage());
        }
        List<Integer> leased = new ArrayList<>();
        Map<Integer, String> heldBy = new LinkedHashMap<>();
        List<Integer> free = new ArrayList<>();
        List<String> leasedNow = new ArrayList<>();
        boolean query = request.kind() == Lease.Kind.QUERY;
        boolean pick = request.kind() == Lease.Kind.PICK;
        int wanted = pick ? request.count() : Integer.MAX_VALUE;
        String who = query ? "" : "run " + request.run() + " of job " + request.job() + " (user " + System.getProperty("user.name")
                + ", since " + Instant.now().truncatedTo(ChronoUnit.SECONDS) + ")";
        for (Lease.Slot gpu : request.gpus()) {
            if (leasedNow.size() >= wanted) {
                break;
            }
            try {
                if (query) {
                    Optional<String> holder = holderOf(gpu.bus());
                    if (holder.isPresent()) {
                        heldBy.put(gpu.index(), holder.get());
                    } else {
                        free.add(gpu.index());
                    }
                } else if (lease(gpu.bus(), who)) {
                    leasedNow.add(gpu.bus());
                    leased.add(gpu.index());
                } else {
                    heldBy.put(gpu.index(), readHolder(gpu.bus()));
                }
            } catch (IOException | IllegalArgumentException e) {
                if (pick) {
                    leasedNow.forEach(this::release);
                }
                return Lease.Answer.failed("lease of GPU " + gpu.index() + " (" + gpu.bus() + "): " + e.getMessage());
            }
        }
        if (pick && leasedNow.size() < wanted) {
            leasedNow.forEach(this::release);
        }
        return new Lease.Answer(leased, heldBy, free, Optional.empty());
    }

    /** Leases {@code bus} for this process; false when another process holds it. */
    private boolean lease(String bus, String who) throws IOException {
        if (held.containsKey(bus)) {
            return true;
        }
        FileChannel ch = open(file(bus));
        FileLock lock;
        try {
            lock = ch.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        }
        if (lock == null) {
            ch.close();
            return false;
        }
        ch.truncate(0);
        ch.write(ByteBuffer.wrap((who + "\n").getBytes(StandardCharsets.UTF_8)), 0);
        ch.force(false);
        held.put(bus, ch);
        return true;
    }

    /** Gives every lease back: this node's workers are gone. */
    synchronized void releaseAll() {
        List.copyOf(held.keySet()).forEach(this::release);
    }

    private void release(String bus) {
        FileChannel ch = held.remove(bus);
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException e) {
                // the lock goes with the descriptor
            }
        }
    }

    /** Who holds {@code bus}, when some other process does. */
    private Optional<String> holderOf(String bus) throws IOException {
        Path f = file(bus);
        if (held.containsKey(bus) || !Files.exists(f, LinkOption.NOFOLLOW_LINKS)) {
            return Optional.empty();
        }
        try (FileChannel ch = open(f)) {
            FileLock lock = ch.tryLock(0, Long.MAX_VALUE, true);
            if (lock != null) {
                lock.release();
                return Optional.empty();
            }
        } catch (OverlappingFileLockException e) {
            // held by this very process (an agent asked about its own lease)
            return Optional.empty();
        }
        return Optional.of(readHolder(bus));
    }

    /**
     * Who holds {@code bus}'s lease: named from the lock itself ({@link LockHolder}), since anyone
     * can write the file's text; the text only for a holder this machine cannot see (another host
     * of a network file system), and said to be its claim.
     */
    private String readHolder(String bus) {
        Optional<Long> pid = LockHolder.pid(file(bus));
        if (pid.isPresent()) {
            return LockHolder.describe(pid.get());
        }
        try {
            byte[] b = Files.readAllBytes(file(bus));
            String text = new String(b, 0, Math.min(b.length, 300), StandardCharsets.UTF_8).strip();
            return text.isEmpty() || !text.chars().allMatch(c -> c >= 0x20) ? "a process this machine cannot see"
                    : "a process this machine cannot see (the lease file says: " + text + ")";
        } catch (IOException e) {
            return "a process this machine cannot see";
        }
    }

    private Path file(String bus) {
        if (!bus.matches("[0-9A-Fa-f:.]+")) {
            throw new IllegalArgumentException("not a PCI bus id: " + bus);
        }
        return dir.resolve(bus.replace(':', '-') + ".lease");
    }

    /**
     * Opens a lease file read-write without following a link: an existing one without O_CREAT (a
     * file another user made in a sticky directory cannot be opened with it where
     * fs.protected_regular is on), else a new one, readable and writable by everyone.
     */
    private static FileChannel open(Path f) throws IOException {
        for (int attempt = 0; ; attempt++) {
            try {
                return FileChannel.open(f, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
            } catch (AccessDeniedException e) {
                throw blocked(f);
            } catch (NoSuchFileException e) {
                try {
                    FileChannel ch = FileChannel.open(f, StandardOpenOption.READ, StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW,
                            LinkOption.NOFOLLOW_LINKS);
                    Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-rw-rw-"));
                    return ch;
                } catch (FileAlreadyExistsException raced) {
                    if (attempt > 3) {
                        throw raced;
                    }
                }
            }
        }
    }

    /** A lease file this user cannot open: whose it is, and what to do. */
    private static IOException blocked(Path f) {
        String owner;
        String mode;
        try {
            owner = Files.getOwner(f, LinkOption.NOFOLLOW_LINKS).getName();
            mode = Integer.toOctalString((Integer) Files.getAttribute(f, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 0777);
        } catch (IOException | RuntimeException e) {
            owner = "another user";
            mode = "?";
        }
        return new IOException("the lease file " + f + " is user " + owner + "'s with mode " + mode + ", so no one else can lease this GPU:"
                + " ask " + owner + " or root to remove it (runjob makes it again, mode 666), or set " + VARIABLE
                + " to a directory of your own (your runs then see only each other's leases)");
    }

    /**
     * The lease directory: made (mode 1777) when missing; else it must be a real directory, owned
     * by root or this user, and either sticky and writable by all or private to this user.
     */
    private void checkDir() throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            try {
                Files.createDirectories(dir.getParent());
                Files.createDirectory(dir);
                Files.setAttribute(dir, "unix:mode", STICKY_WORLD_WRITABLE, LinkOption.NOFOLLOW_LINKS);
            } catch (FileAlreadyExistsException e) {
                // made by another run meanwhile: checked below
            }
        }
        if (Files.isSymbolicLink(dir) || !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException("the GPU lease directory " + dir + " is not a directory");
        }
        int mode = (Integer) Files.getAttribute(dir, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        int uid = (Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        int me = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        boolean shared = (mode & STICKY_WORLD_WRITABLE) == STICKY_WORLD_WRITABLE;
        boolean mine = uid == me && (mode & 022) == 0;
        if (!(uid == 0 || uid == me) || !(shared || mine)) {
            throw new IOException("the GPU lease directory " + dir + " is owned by uid " + uid + " with mode "
                    + Integer.toOctalString(mode & 07777) + ": it must be root's or yours, and mode 1777 (or private to you)");
        }
    }
}
