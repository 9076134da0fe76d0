package org.runjob.protocol;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The FILES payload: what a node's workdir should hold. Per file its destination (relative to
 * the workdir, '/'-separated, never {@code ..}, {@code .} or {@code .runjob}), size, modification
 * time (seconds), permission bits and SHA-256 (lowercase hex).
 */
public record FileManifest(List<Entry> entries) {

    /** One file. */
    public record Entry(String dest, long size, long mtimeSeconds, int mode, String sha256) {
        public Entry {
            if (dest.isEmpty() || dest.startsWith("/") || List.of(dest.split("/", -1)).stream()
                    .anyMatch(p -> p.isEmpty() || p.equals("..") || p.equals(".") || p.equals(".runjob"))) {
                throw new IllegalArgumentException("destination '" + dest + "' is not a plain path inside the workdir");
            }
        }
    }

    public FileManifest {
        entries = List.copyOf(entries);
    }

    public byte[] encode() {
        return Wire.bytes(out -> {
            out.writeInt(entries.size());
            for (Entry e : entries) {
                byte[] dest = e.dest().getBytes(StandardCharsets.UTF_8);
                out.writeInt(dest.length);
                out.write(dest);
                out.writeLong(e.size());
                out.writeLong(e.mtimeSeconds());
                out.writeInt(e.mode());
                byte[] sha = e.sha256().getBytes(StandardCharsets.US_ASCII);
                out.writeInt(sha.length);
                out.write(sha);
            }
        });
    }

    /** @throws IllegalArgumentException for bytes that are not a manifest, or a destination outside the workdir */
    public static FileManifest decode(byte[] payload) {
        List<Entry> out = new ArrayList<>();
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(payload))) {
            int n = in.readInt();
            for (int i = 0; i < n; i++) {
                String dest = new String(in.readNBytes(in.readInt()), StandardCharsets.UTF_8);
                long size = in.readLong();
                long mtime = in.readLong();
                int mode = in.readInt();
                String sha = new String(in.readNBytes(in.readInt()), StandardCharsets.US_ASCII);
                out.add(new Entry(dest, size, mtime, mode, sha));
            }
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated file manifest", e);
        }
        return new FileManifest(out);
    }
}
