package org.runjob.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Whether a directory can be trusted with code that runs, as OpenSSH's StrictModes judges a home
 * directory: who owns it and who else can write it, read with lstat ({@code unix:uid},
 * {@code unix:mode}).
 */
final class Trust {

    private static final int GROUP_WRITE = 0020;
    private static final int OTHER_WRITE = 0002;
    private static final int STICKY = 01000;

    private Trust() {
    }

    static long myUid() {
        try {
            return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * The parts of {@code dir}'s path that exist, the workdir itself included, each read without
     * following it (a symlink is judged as a link): owned by root or me, and sticky where others
     * can write. Judged before runjob creates anything there, so it never creates a directory
     * through a link another user could point anywhere (at root's files, say).
     */
    static Optional<String> beforeCreating(Path dir) {
        long me = myUid();
        Path abs = dir.toAbsolutePath().normalize();
        for (Path p = abs; p != null; p = p.getParent()) {
            if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                continue;
            }
            try {
                int uid = ((Number) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS)).intValue();
                int mode = ((Number) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS)).intValue();
                boolean link = Files.isSymbolicLink(p);
                if (p.equals(abs) && !link) {
                    continue; // the workdir itself: ofWorkdir judges it, once it exists
                }
                String which = p.equals(abs) ? "the workdir " + p : p + (link ? " (a symlink on the way to the workdir " + dir + ")"
                        : " (above the workdir " + dir + ")");
                if (uid != 0 && uid != me) {
                    return Optional.of(which + " is owned by uid " + uid + ", not by you or root: its owner could point it anywhere;"
                            + " use a workdir under a directory you own");
                }
                if (!link && (mode & (GROUP_WRITE | OTHER_WRITE)) != 0 && (mode & STICKY) == 0) {
                    return Optional.of(which + " is writable by others (mode " + octal(mode)
                            + ") without the sticky bit: they could replace the workdir; chmod go-w " + p);
                }
            } catch (IOException | RuntimeException e) {
                return Optional.of("cannot read " + p + ": " + e.getMessage());
            }
        }
        return Optional.empty();
    }

    /** The workdir: owned by me and writable by nobody else; its ancestors owned by root or me, and sticky where others can write. */
    static Optional<String> ofWorkdir(Path dir) {
        Optional<String> own = ofOwnDirectory(dir);
        if (own.isPresent()) {
            return own;
        }
        long me = myUid();
        for (Path p = dir.toAbsolutePath().getParent(); p != null; p = p.getParent()) {
            try {
                int uid = ((Number) Files.getAttribute(p, "unix:uid")).intValue();
                int mode = ((Number) Files.getAttribute(p, "unix:mode")).intValue();
                if (uid != 0 && uid != me) {
                    return Optional.of(p + " (above the workdir " + dir + ") is owned by uid " + uid + ", not by you or root:"
                            + " its owner could replace the workdir; use a workdir under a directory you own");
                }
                if ((mode & (GROUP_WRITE | OTHER_WRITE)) != 0 && (mode & STICKY) == 0) {
                    return Optional.of(p + " (above the workdir " + dir + ") is writable by others (mode " + octal(mode)
                            + ") without the sticky bit: they could replace the workdir; chmod go-w " + p);
                }
            } catch (IOException | RuntimeException e) {
                return Optional.of("cannot read " + p + ": " + e.getMessage());
            }
        }
        return Optional.empty();
    }

    /** A directory runjob keeps its files in: owned by me, not a symlink, writable by nobody else. */
    static Optional<String> ofOwnDirectory(Path dir) {
        try {
            if (Files.isSymbolicLink(dir) && dir.getFileName() != null && dir.getFileName().toString().equals(".runjob")) {
                return Optional.of(dir + " is a symlink; runjob never writes through one: remove it");
            }
            int uid = ((Number) Files.getAttribute(dir, "unix:uid")).intValue();
            int mode = ((Number) Files.getAttribute(dir, "unix:mode")).intValue();
            long me = myUid();
            if (uid != me) {
                return Optional.of(dir + " is owned by uid " + uid + ", not by you (uid " + me + "): another user could plant code"
                        + " the job runs; use a workdir of your own");
            }
            if ((mode & (GROUP_WRITE | OTHER_WRITE)) != 0) {
                return Optional.of(dir + " is writable by other users (mode " + octal(mode) + "): they could plant code the job"
                        + " runs; chmod go-w " + dir);
            }
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.of("cannot read " + dir + ": " + e.getMessage());
        }
    }

    private static String octal(int mode) {
        return String.format("%04o", mode & 07777);
    }
}
