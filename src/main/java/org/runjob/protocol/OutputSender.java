package org.runjob.protocol;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;


/**
 * Sends outputs: every regular file under the named paths of the run's directory, in path order
 * (a directory's entries by name, depth first), as OUTPUT_DATA frames, hashed as it goes.
 *
 * <p>Every path is opened one component at a time from the run's directory, each relative to the
 * directory opened before it and without following a symlink (openat with O_NOFOLLOW, through a
 * {@link SecureDirectoryStream}), so a symlink anywhere on the way, at the path, inside a
 * directory, or swapped in while the walk runs, is never followed. Skipped, each named with why in
 * the {@link Outputs.Manifest}: a symlink, a path outside the run's directory, a path that does not
 * exist, and a file whose size or modification time changed while it was read (a writer still at
 * it: its data is dropped, not kept as a mix of two versions), and every file once those sent
 * reach the request's byte limit. The agent answers OUTPUTS with it;
 * a submitted run's master node sends its run folder's {@code outputs/} with it to {@code runjob pull}.
 */
public final class OutputSender {

    static final int CHUNK = 256 << 10;
    private static final String LINK = ": a symlink (never followed)";

    private final Path base;
    private final long maxBytes;
    private long sentBytes;
    private final Consumer<Frame> send;
    private final List<Outputs.Entry> sent = new ArrayList<>();
    private final List<String> skipped = new ArrayList<>();

    private OutputSender(Path base, long maxBytes, Consumer<Frame> send) {
        this.base = base;
        this.maxBytes = maxBytes;
        this.send = send;
    }

    /** Sends the files through {@code send}, with no limit on their bytes; returns the manifest for the REPLY. */
    public static Outputs.Manifest send(List<String> paths, Path dir, Consumer<Frame> send) {
        return send(paths, Long.MAX_VALUE, dir, send);
    }

    /** Sends the files through {@code send} until they reach {@code maxBytes}; returns the manifest for the REPLY. */
    public static Outputs.Manifest send(List<String> paths, long maxBytes, Path dir, Consumer<Frame> send) {
        OutputSender sender = new OutputSender(dir.toAbsolutePath().normalize(), maxBytes, send);
        for (String p : paths) {
            sender.path(p);
        }
        return new Outputs.Manifest(sender.sent, sender.skipped);
    }

    private void path(String p) {
        Path f = base.resolve(p).normalize();
        if (!f.startsWith(base) || f.equals(base)) {
            skipped.add(p + ": not inside the run's directory");
            return;
        }
        Path rel = base.relativize(f);
        DirectoryStream<Path> root;
        try {
            root = Files.newDirectoryStream(base);
        } catch (IOException e) {
            skipped.add(p + ": cannot be read: " + reason(e));
            return;
        }
        try (DirectoryStream<Path> top = root) {
            if (!(top instanceof SecureDirectoryStream<Path> dir)) {
                skipped.add(p + ": cannot be read safely: this file system cannot open a path without following symlinks");
                return;
            }
            descend(dir, rel, 0, p);
        } catch (IOException e) {
            skipped.add(p + ": cannot be read: " + reason(e));
        }
    }

    /** Opens {@code rel}'s component {@code i} in {@code dir}: the next directory on the way, or the path itself. */
    private void descend(SecureDirectoryStream<Path> dir, Path rel, int i, String asked) throws IOException {
        Path name = rel.getName(i);
        Path shown = rel.subpath(0, i + 1);
        BasicFileAttributes a;
        try {
            a = attributes(dir, name);
        } catch (NoSuchFileException e) {
            skipped.add(asked + ": no such file");
            return;
        }
        if (a.isSymbolicLink()) {
            skipped.add(shown + LINK);
        } else if (i < rel.getNameCount() - 1) {
            if (!a.isDirectory()) {
                skipped.add(asked + ": no such file");
                return;
            }
            try (SecureDirectoryStream<Path> next = dir.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
                descend(next, rel, i + 1, asked);
            }
        } else if (a.isRegularFile()) {
            file(dir, name, shown, a);
        } else if (a.isDirectory()) {
            try (SecureDirectoryStream<Path> next = dir.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
                walk(next, shown);
            }
        } else {
            skipped.add(asked + ": not a regular file or directory");
        }
    }

    /** Sends every regular file under the open directory {@code dir}, shown as {@code shown}, by name. */
    private void walk(SecureDirectoryStream<Path> dir, Path shown) throws IOException {
        List<Path> names = new ArrayList<>();
        for (Path entry : dir) {
            names.add(entry.getFileName());
        }
        names.sort(null);
        for (Path name : names) {
            Path child = shown.resolve(name);
            BasicFileAttributes a;
            try {
                a = attributes(dir, name);
            } catch (NoSuchFileException e) {
                continue; // gone since it was listed
            }
            if (a.isSymbolicLink()) {
                skipped.add(child + LINK);
            } else if (a.isRegularFile()) {
                file(dir, name, child, a);
            } else if (a.isDirectory()) {
                try (SecureDirectoryStream<Path> next = dir.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
                    walk(next, child);
                } catch (IOException e) {
                    skipped.add(child + ": cannot be read: " + reason(e));
                }
            }
        }
    }

    private static BasicFileAttributes attributes(SecureDirectoryStream<Path> dir, Path name) throws IOException {
        return dir.getFileAttributeView(name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS).readAttributes();
    }

    private void file(SecureDirectoryStream<Path> dir, Path name, Path shown, BasicFileAttributes before) {
        String path = shown.toString();
        if (before.size() > maxBytes - sentBytes) {
            skipped.add(path + ": not brought: the outputs of this node reached the limit (" + limit(maxBytes) + ", outputs_max_gib)");
            return;
        }
        int index = sent.size();
        sentBytes += before.size();
        try {
            sent.add(one(dir, name, path, index, before));
        } catch (IOException e) {
            send.accept(new Frame(Frame.Type.OUTPUT_DATA, index, new byte[0]));
            sent.add(new Outputs.Entry(path, -1, ""));
            skipped.add(path + ": " + (e instanceof Changed ? e.getMessage() : "cannot be read: " + reason(e)));
        }
    }

    private Outputs.Entry one(SecureDirectoryStream<Path> dir, Path name, String path, int index, BasicFileAttributes before)
            throws IOException {
        MessageDigest d;
        try {
            d = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        long size = 0;
        try (SeekableByteChannel in = dir.newByteChannel(name, Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS))) {
            ByteBuffer buf = ByteBuffer.allocate(CHUNK);
            while (true) {
                buf.clear();
                while (buf.hasRemaining() && in.read(buf) > 0) {
                    // fill the chunk
                }
                int n = buf.position();
                if (n == 0) {
                    break;
                }
                byte[] chunk = new byte[n];
                buf.flip().get(chunk);
                d.update(chunk);
                size += n;
                send.accept(new Frame(Frame.Type.OUTPUT_DATA, index, chunk));
            }
        }
        BasicFileAttributes after = attributes(dir, name);
        if (after.size() != size || before.size() != size || !after.lastModifiedTime().equals(before.lastModifiedTime())
                || !Objects.equals(after.fileKey(), before.fileKey())) {
            throw new Changed();
        }
        send.accept(new Frame(Frame.Type.OUTPUT_DATA, index, new byte[0]));
        return new Outputs.Entry(path, size, HexFormat.of().formatHex(d.digest()));
    }

    /** A file that changed while it was read. */
    private static final class Changed extends IOException {
        Changed() {
            super("changed while it was read (something still writes it): not kept; pull it again once it is written");
        }
    }

    private static String limit(long bytes) {
        return bytes % (1L << 30) == 0 ? (bytes >> 30) + " GiB" : bytes + " bytes";
    }

    private static String reason(IOException e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof FileSystemException fse && fse.getReason() != null) {
            return fse.getReason();
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
