package org.runjob.distribute;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A file's SHA-256 as lowercase hex (what {@code sha256sum} prints). {@link #ofSource} hashes a
 * file that is shipped to many nodes once per process, not once per node: keyed by its real path,
 * size and modification time, so a file changed in between is hashed again.
 */
public final class Sha256 {

    private record Key(Path path, long size, long modified) {
    }

    private static final Map<Key, String> SOURCES = new ConcurrentHashMap<>();

    private Sha256() {
    }

    /** A source file's hash, computed once however many nodes (threads) ask for it at the same time. */
    public static String ofSource(Path file) throws IOException {
        BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
        Key key = new Key(file.toRealPath(), a.size(), a.lastModifiedTime().toMillis());
        try {
            return SOURCES.computeIfAbsent(key, k -> {
                try {
                    return of(k.path());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** Reads the whole file now. */
    public static String of(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            int n;
            while ((n = in.read(buf)) > 0) {
                md.update(buf, 0, n);
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e); // every JDK has SHA-256
        }
    }
}
