package org.runjob.agent;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.runjob.protocol.Answer;
import org.runjob.protocol.FileManifest;
import org.runjob.protocol.FileNeeds;

/**
 * Receives a job's files into the workdir over the agent's channel, never through a symlink.
 *
 * Its methods are synchronized: a relayed transfer writes from the agent's fetch thread, and the
 * end of the channel removes a partial file from the read loop.
 *
 * <ol>
 *   <li>FILES brings the manifest: per file its destination (relative, no {@code ..}), size,
 *       modification time, mode and SHA-256. The answer ({@link FileNeeds}) says, per file, whether
 *       it is needed (not when kept: equal size and SHA-256, never size and time alone), or why
 *       none is taken, e.g. when the needed bytes do not fit on the disk.</li>
 *   <li>Directories are walked from the workdir with a {@link SecureDirectoryStream} (openat with
 *       O_NOFOLLOW): a directory on the way that is a symlink is refused by name, never entered.</li>
 *   <li>Each needed file arrives as FILE_DATA chunks and is written to a new temporary name of this
 *       run beside its destination (O_CREAT|O_EXCL, mode 600), its SHA-256 computed as it is
 *       written; when complete and equal to the manifest's, it gets its mode and time and is renamed
 *       over the destination (renameat: a symlink there is replaced, never followed). Otherwise,
 *       and on any failure (disk full included), the temporary file is removed.</li>
 *   <li>With a {@link FileStore} (a run in a directory of its own), a file the store holds is
 *       copied into place, verified by SHA-256, and answered {@code same}; each file received is
 *       added to it.</li>
 *   <li>The last FILE_DATA (rank -1) ends the transfer; the answer is {@code ok N} (bytes written)
 *       or the first error.</li>
 * </ol>
 */
final class FileReceiver {

    private final Path workdir;
    private final Optional<FileStore> store;
    private final String tag;
    private List<FileManifest.Entry> entries = List.of();
    /** The manifest of the last transfer that ended well: what the workdir holds for this run. */
    private volatile List<FileManifest.Entry> held = List.of();
    private List<Boolean> needed = List.of();
    private String error;
    private long written;
    // the file being received
    private int current = -1;
    private SecureDirectoryStream<Path> dir;
    private Path tmp;
    private SeekableByteChannel out;
    private MessageDigest digest;
    private long received;

    FileReceiver(Path workdir) {
        this(workdir, Optional.empty());
    }

    /** A receiver that links files {@code store} holds instead of receiving them, and keeps there what it receives. */
    FileReceiver(Path workdir, Optional<FileStore> store) {
        this.workdir = workdir;
        this.store = store;
        this.tag = uniqueTag(".runjob-");
    }

    /** {@code prefix}, this process's pid and 12 random hex digits: a temporary name's suffix no other writer uses. */
    static String uniqueTag(String prefix) {
        byte[] r = new byte[6];
        new SecureRandom().nextBytes(r);
        return prefix + ProcessHandle.current().pid() + "-" + HexFormat.of().formatHex(r);
    }

    /** Reads a manifest and answers which files are needed. */
    synchronized FileNeeds manifest(byte[] payload) {
        error = null;
        written = 0;
        try {
            entries = FileManifest.decode(payload).entries();
        } catch (IllegalArgumentException e) {
            return fail("a bad file manifest: " + e.getMessage());
        }
        List<Boolean> need = new ArrayList<>();
        long bytes = 0;
        for (FileManifest.Entry e : entries) {
            try {
                boolean n = !same(e) && !linked(e);
                need.add(n);
                bytes += n ? e.size() : 0;
            } catch (IOException ex) {
                return fail(ex.getMessage());
            }
        }
        needed = need;
        try {
            long free = Files.getFileStore(workdir).getUsableSpace();
            if (bytes > free) {
                return fail("no space left in workdir " + workdir + ": needs " + mib(bytes) + ", " + mib(free) + " free");
            }
        } catch (IOException e) {
            // unknown free space: writing will tell
        }
        return FileNeeds.of(need);
    }

    /**
     * A chunk of file {@code index}; an empty chunk ends that file, index -1 ends the transfer.
     * Returns the answer at the end (the bytes written, or why the transfer failed), else null.
     */
    Answer data(int index, byte[] chunk) {
        return data(index, chunk, chunk.length);
    }

    /** The same for the first {@code length} bytes of {@code buf} (a reused buffer: nothing is kept). */
    synchronized Answer data(int index, byte[] buf, int length) {
        if (index < 0) {
            closeCurrent();
            Answer answer = error != null ? Answer.failed(error) : Answer.done(written, "-");
            if (error == null) {
                held = entries;
            }
            entries = List.of();
            return answer;
        }
        if (error != null || index >= entries.size() || !needed.get(index)) {
            return null;
        }
        try {
            if (index != current) {
                closeCurrent();
                open(index);
            }
            if (length == 0) {
                finish();
                return null;
            }
            out.write(ByteBuffer.wrap(buf, 0, length));
            digest.update(buf, 0, length);
            received += length;
            written += length;
        } catch (IOException e) {
            String why = WorkdirGuard.reason(e);
            if (why.contains("No space left")) {
                long free = -1;
                try {
                    closeCurrent();
                    free = Files.getFileStore(workdir).getUsableSpace();
                } catch (IOException ignored) {
                    // unknown
                }
                error = "no space left in workdir " + workdir + " writing " + entries.get(index).dest() + ": needs "
                        + mib(entries.get(index).size()) + (free >= 0 ? ", " + mib(free) + " free" : "");
            } else {
                error = "cannot write " + entries.get(index).dest() + ": " + why;
            }
            closeCurrent();
        }
        return null;
    }

    /** The files the workdir holds for this run (the manifest of the last transfer that ended well). */
    List<FileManifest.Entry> held() {
        return held;
    }

    /** The indices of the current manifest's files that this node needs. */
    synchronized List<Integer> needed() {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < needed.size(); i++) {
            if (needed.get(i)) {
                out.add(i);
            }
        }
        return out;
    }

    synchronized FileManifest.Entry entry(int index) {
        return entries.get(index);
    }

    /** True when this transfer failed (its answer will be the error). */
    synchronized boolean failed() {
        return error != null;
    }

    /** Fails this transfer (a relay that broke off): the file being written is removed; the answer names {@code why}. */
    synchronized void abort(String why) {
        if (error == null) {
            error = why;
        }
        closeCurrent();
    }

    /** Opens a held file for reading, walked from the workdir without following a symlink. */
    SeekableByteChannel read(FileManifest.Entry e) throws IOException {
        try (SecureDirectoryStream<Path> d = walk(e.dest(), false)) {
            if (d == null) {
                throw new NoSuchFileException(e.dest());
            }
            return d.newByteChannel(Path.of(name(e.dest())), Set.<OpenOption>of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS));
        }
    }

    private void open(int index) throws IOException {
        FileManifest.Entry e = entries.get(index);
        current = index;
        dir = walk(e.dest(), true);
        tmp = Path.of(name(e.dest()) + tag);
        out = dir.newByteChannel(tmp, Set.<OpenOption>of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        received = 0;
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** Checks the complete file and renames it into place. */
    private void finish() throws IOException {
        FileManifest.Entry e = entries.get(current);
        out.close();
        out = null;
        String sha = HexFormat.of().formatHex(digest.digest());
        if (received != e.size() || !sha.equals(e.sha256())) {
            throw new IOException("arrived damaged (" + received + " of " + e.size() + " bytes, SHA-256 " + sha + ")");
        }
        PosixFileAttributeView view = dir.getFileAttributeView(tmp, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
        view.setPermissions(permissions(e.mode()));
        FileTime t = FileTime.fromMillis(e.mtimeSeconds() * 1000);
        view.setTimes(t, null, null);
        dir.move(tmp, dir, Path.of(name(e.dest())));
        tmp = null;
        closeCurrent();
        store.ifPresent(s -> s.keep(e, workdir.resolve(e.dest())));
    }

    /** True when the store held {@code e} and a verified copy of it is now in place. */
    private boolean linked(FileManifest.Entry e) throws IOException {
        if (store.isEmpty()) {
            return false;
        }
        try (SecureDirectoryStream<Path> d = walk(e.dest(), true)) {
            // the directories on the way exist and none is a symlink: the link lands in the workdir
            return d != null && store.get().copyTo(e, workdir.resolve(e.dest()));
        }
    }

    /** Ends the current file: closes it, removes its temporary name unless it was renamed. */
    private void closeCurrent() {
        try {
            if (out != null) {
                out.close();
            }
            if (tmp != null && dir != null) {
                dir.deleteFile(tmp);
            }
            if (dir != null) {
                dir.close();
            }
        } catch (IOException e) {
            // best effort: nothing more to clean
        }
        out = null;
        tmp = null;
        dir = null;
        current = -1;
    }

    /** True when the destination holds these bytes already (quick check, else hash). */
    private boolean same(FileManifest.Entry e) throws IOException {
        try (SecureDirectoryStream<Path> d = walk(e.dest(), false)) {
            if (d == null) {
                return false;
            }
            Path name = Path.of(name(e.dest()));
            PosixFileAttributes a;
            try {
                a = d.getFileAttributeView(name, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS).readAttributes();
            } catch (NoSuchFileException ex) {
                return false;
            }
            if (!a.isRegularFile()) {
                return false; // a symlink or directory there is replaced, never followed
            }
            if (a.size() != e.size()) {
                return false;
            }
            // by content, never by size and time alone: a worker may have rewritten it in place and restored its time
            try (SeekableByteChannel in = d.newByteChannel(name, Set.<OpenOption>of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS))) {
                MessageDigest md = MessageDigest.getInstance("SHA-256");
                ByteBuffer buf = ByteBuffer.allocate(1 << 16);
                while (in.read(buf) > 0) {
                    buf.flip();
                    md.update(buf);
                    buf.clear();
                }
                return HexFormat.of().formatHex(md.digest()).equals(e.sha256());
            } catch (NoSuchAlgorithmException ex) {
                throw new IllegalStateException(ex);
            }
        }
    }

    /**
     * The directory that holds {@code dest}, walked from the workdir without following symlinks;
     * missing directories are made when {@code create}, else null is returned for them.
     */
    private SecureDirectoryStream<Path> walk(String dest, boolean create) throws IOException {
        DirectoryStream<Path> root = Files.newDirectoryStream(workdir);
        if (!(root instanceof SecureDirectoryStream<Path> d)) {
            root.close();
            throw new IOException("this file system cannot open directories without following symlinks");
        }
        String[] parts = dest.split("/");
        Path at = workdir;
        for (int i = 0; i < parts.length - 1; i++) {
            Path name = Path.of(parts[i]);
            at = at.resolve(name);
            SecureDirectoryStream<Path> next;
            try {
                next = d.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS);
            } catch (NoSuchFileException e) {
                if (!create) {
                    d.close();
                    return null;
                }
                Files.createDirectories(at);
                next = d.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS);
            } catch (FileSystemException e) {
                BasicFileAttributeView v = d.getFileAttributeView(name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
                boolean link = v.readAttributes().isSymbolicLink();
                d.close();
                throw new IOException(link ? "refusing to write " + dest + " through the symlink " + at + " -> "
                        + Files.readSymbolicLink(at) + " (in workdir " + workdir + "); remove the link or ship it elsewhere"
                        : "cannot enter " + at + " for " + dest + ": " + WorkdirGuard.reason(e));
            }
            d.close();
            d = next;
        }
        return d;
    }

    private static String name(String dest) {
        return dest.substring(dest.lastIndexOf('/') + 1);
    }

    private FileNeeds fail(String message) {
        error = message;
        return FileNeeds.failed(message);
    }

    static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> out = EnumSet.noneOf(PosixFilePermission.class);
        PosixFilePermission[] all = PosixFilePermission.values();
        for (int i = 0; i < 9; i++) {
            if ((mode & (1 << (8 - i))) != 0) {
                out.add(all[i]);
            }
        }
        return out;
    }

    private static String mib(long bytes) {
        return (bytes + (1 << 20) - 1 >> 20) + " MiB";
    }
}
