package org.runjob.agent;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.runjob.protocol.FileManifest;

/**
 * One copy per content of the files runs received on this node ({@code WORKDIR/.runjob/files}),
 * so that a run in a directory of its own gets a file an earlier run received as a hard link,
 * without receiving or copying it.
 *
 * <ul>
 *   <li>An entry's name is its SHA-256, mode and modification time: a hard link shares all
 *       three, so runs that ship the same bytes with another mode or time get an entry of their own.</li>
 *   <li>An entry is used when it is a regular file (read without following a link) of the
 *       manifest's size and time, rsync's quick check, as a file already in the workdir is.</li>
 *   <li>Entries are added and linked out under a temporary name and renamed into place, so a
 *       reader never sees half a link; the store and its parent must be owned by this user, not
 *       symlinks, and writable by nobody else, or the store is not used.</li>
 *   <li>An entry no run directory links any more (link count 1) is removed when the store opens.</li>
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
     * Links the stored copy of {@code e} to {@code target} (a file in a trusted run directory);
     * true when {@code target} now holds it, false when there is no usable copy or linking failed.
     */
    boolean linkTo(FileManifest.Entry e, Path target) {
        Path stored = dir.resolve(key(e));
        try {
            PosixFileAttributes a = Files.readAttributes(stored, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!a.isRegularFile() || a.size() != e.size() || a.lastModifiedTime().to(TimeUnit.SECONDS) != e.mtimeSeconds()) {
                return false;
            }
            Path tmp = target.resolveSibling(target.getFileName() + tag);
            Files.deleteIfExists(tmp);
            Files.createLink(tmp, stored);
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException ex) {
                Files.deleteIfExists(tmp);
                throw ex;
            }
            return true;
        } catch (IOException | UnsupportedOperationException | SecurityException ex) {
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
