package org.runjob.protocol;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;


/**
 * Sends outputs: every regular file under the named paths of the run's directory, in path order,
 * as OUTPUT_DATA frames, hashed as it goes. A path outside the run's directory, a symlink (never
 * followed, at the path or inside a directory) and a path that does not exist are skipped, each
 * named with why in the {@link Outputs.Manifest}. The agent answers OUTPUTS with it; a submitted
 * run's master node sends its run folder's {@code outputs/} with it to {@code runjob pull}.
 */
public final class OutputSender {

    static final int CHUNK = 1 << 20;

    private OutputSender() {
    }

    /** Sends the files through {@code send}; returns the manifest for the REPLY. */
    public static Outputs.Manifest send(List<String> paths, Path dir, Consumer<Frame> send) {
        Path base = dir.toAbsolutePath().normalize();
        List<Path> files = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        for (String p : paths) {
            Path f = base.resolve(p).normalize();
            if (!f.startsWith(base) || f.equals(base)) {
                skipped.add(p + ": not inside the run's directory");
            } else if (Files.isSymbolicLink(f)) {
                skipped.add(p + ": a symlink (never followed)");
            } else if (Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)) {
                files.add(f);
            } else if (Files.isDirectory(f, LinkOption.NOFOLLOW_LINKS)) {
                try (Stream<Path> walk = Files.walk(f)) {
                    walk.sorted().forEach(x -> {
                        if (Files.isSymbolicLink(x)) {
                            skipped.add(base.relativize(x) + ": a symlink (never followed)");
                        } else if (Files.isRegularFile(x, LinkOption.NOFOLLOW_LINKS)) {
                            files.add(x);
                        }
                    });
                } catch (IOException | RuntimeException e) {
                    skipped.add(p + ": cannot be read: " + e.getMessage());
                }
            } else {
                skipped.add(p + ": no such file");
            }
        }
        List<Outputs.Entry> sent = new ArrayList<>();
        for (Path f : files) {
            int index = sent.size();
            try {
                sent.add(one(f, base.relativize(f).toString(), index, send));
            } catch (IOException e) {
                send.accept(new Frame(Frame.Type.OUTPUT_DATA, index, new byte[0]));
                sent.add(new Outputs.Entry(base.relativize(f).toString(), -1, ""));
                skipped.add(base.relativize(f) + ": cannot be read: " + reason(e));
            }
        }
        return new Outputs.Manifest(sent, skipped);
    }

    private static Outputs.Entry one(Path f, String name, int index, Consumer<Frame> send) throws IOException {
        MessageDigest d;
        try {
            d = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        long size = 0;
        try (InputStream in = Files.newInputStream(f, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            byte[] buf = new byte[CHUNK];
            int n;
            while ((n = in.readNBytes(buf, 0, CHUNK)) > 0) {
                d.update(buf, 0, n);
                size += n;
                send.accept(new Frame(Frame.Type.OUTPUT_DATA, index, Arrays.copyOf(buf, n)));
            }
        }
        send.accept(new Frame(Frame.Type.OUTPUT_DATA, index, new byte[0]));
        return new Outputs.Entry(name, size, HexFormat.of().formatHex(d.digest()));
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
