package org.runjob.agent;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;

import org.runjob.protocol.FileManifest;

/**
 * One copy per content of the files runs received on this node ({@code WORKDIR/.runjob/files}),
 * so that a run in a directory of its own gets a file an earlier run received without receiving
 * it again: copied from the store, verified by SHA-256 as it is copied.
 *
 * <ul>
 *   <li>An entry's name is its SHA-256, mode and modification time, so runs that ship the same
 *       bytes with another mode or time get an entry of their own.</li>
 *   <li>An entry is the hard link of the file of the run that received it; later runs get a copy
 *       of their own ({@link #copyTo}), used only when its bytes hash to the manifest's SHA-256,
 *       so a worker that rewrites its file in place, or anyone who changed the entry, reaches no
 *       other run: the changed entry is removed and the file received again.</li>
 *   <li>Entries are added and linked out under a temporary name and renamed into place, so a
 *       reader never sees half a link; the store and its parent must be owned by this user, not
 *       symlinks, and writable by nobody else, or the store is not used.</li>
 *   <li>An entry whose receiving run's directory is gone (link count 1) is removed when the store
 *       opens; the next run receives the file and becomes its holder.</li>
 * </ul>
 * Every failure only means a file is received instead of linked.
 */
final class FileStore {

    private final Path dir;
    private final String tag;

    private FileStore(Path dir) {
        this.dir = dir;
        this.tag = FileReceiver.uniqueTag(".tmp-");
    }

    /**
     * The store at {@code dir}, made (mode 700) when missing; empty when it cannot be trusted or made.
     * Runs that start at once may each try to make it: the one that loses uses the one that won.
     */
    static Optional<FileStore> open(Path dir) {
        try {
            Files.createDirectories(dir.getParent());
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
        } catch (FileAlreadyExistsException e) {
            // another run made it between the check and ours: it is checked below like any other
        } catch (IOException e) {
            return Optional.empty();
        }
        for (Path p : new Path[] {dir, dir.getParent()}) {
            if (Files.isSymbolicLink(p) || Trust.ofOwnDirectory(p).isPresent()) {
                return Optional.empty();
            }
        }
        FileStore store = new FileStore(dir);
        store.prune();
        return Optional.of(store);
    }

    /** The entry's name: SHA-256, mode (octal) and modification time (seconds). */
    static String key(FileManifest.Entry e) {
        return e.sha256() + "-" + Integer.toOctalString(e.mode()) + "-" + e.mtimeSeconds();
    }

    /**
     * Copies the stored copy of {@code e} to {@code target} (a file in a trusted run directory),
     * hashing it as it goes: true when {@code target} now holds exactly {@code e}'s bytes (size and
     * SHA-256), with its mode and time; false when there is no usable copy (a stored copy whose
     * bytes differ is removed: a worker that rewrote its run's file in place changed it) or copying
     * failed. The run's file is its own: what a worker writes to it reaches neither the store nor
     * another run.
     */
    boolean copyTo(FileManifest.Entry e, Path target) {
        Path stored = dir.resolve(key(e));
        Path tmp = target.resolveSibling(target.getFileName() + tag);
        try {
            PosixFileAttributes a = Files.readAttributes(stored, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!a.isRegularFile() || a.size() != e.size()) {
                return false;
            }
            Files.deleteIfExists(tmp);
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            long copied = 0;
            try (InputStream in = Files.newInputStream(stored, LinkOption.NOFOLLOW_LINKS);
                 OutputStream out = Files.newOutputStream(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
                byte[] buf = new byte[1 << 16];
                int n;
                while ((n = in.read(buf)) > 0) {
                    md.update(buf, 0, n);
                    out.write(buf, 0, n);
                    copied += n;
                }
            }
            if (copied != e.size() || !HexFormat.of().formatHex(md.digest()).equals(e.sha256())) {
                Files.deleteIfExists(tmp);
                Files.deleteIfExists(stored);
                return false;
            }
            Files.setPosixFilePermissions(tmp, FileReceiver.permissions(e.mode()));
            Files.setLastModifiedTime(tmp, FileTime.fromMillis(e.mtimeSeconds() * 1000));
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return true;
        } catch (IOException | UnsupportedOperationException | SecurityException | NoSuchAlgorithmException ex) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // the file is received instead
            }
            return false;
        }
    }

    /** Keeps {@code file}, just received and verified as {@code e}, as the stored copy of {@code e}. */
    void keep(FileManifest.Entry e, Path file) {
        Path tmp = dir.resolve(key(e) + tag);
        try {
            Files.deleteIfExists(tmp);
            Files.createLink(tmp, file);
            Files.move(tmp, dir.resolve(key(e)), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException | UnsupportedOperationException | SecurityException ex) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // the store stays without it
            }
        }
    }

    /** Removes entries no run directory links any more. */
    private void prune() {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path p : entries) {
                Object links = Files.getAttribute(p, "unix:nlink", LinkOption.NOFOLLOW_LINKS);
                if (links instanceof Number n && n.intValue() == 1) {
                    Files.deleteIfExists(p);
                }
            }
        } catch (IOException | RuntimeException e) {
            // an entry kept is only space
        }
    }
}
