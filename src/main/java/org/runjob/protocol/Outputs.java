package org.runjob.protocol;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The OUTPUTS request and its answer: the coordinator names paths relative to the run's directory
 * (a Wire list) and the most bytes to send (a long); the agent sends each regular file under them as OUTPUT_DATA frames (the file's
 * index in {@code rank}, chunks of at most 256 KiB, an empty chunk ending it), then one REPLY: this
 * {@link Manifest}, each file's path, size and SHA-256 in index order, and the paths it
 * did not send, with why.
 */
public final class Outputs {

    private Outputs() {
    }

    /** What an OUTPUTS request asks: these paths, and at most {@code maxBytes} of their files. */
    public record Request(List<String> paths, long maxBytes) {
        public Request {
            paths = List.copyOf(paths);
        }

        public byte[] encode() {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            try (DataOutputStream out = new DataOutputStream(bytes)) {
                Wire.list(out, paths);
                out.writeLong(maxBytes);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return bytes.toByteArray();
        }

        /** @throws IllegalArgumentException for bytes that are no OUTPUTS payload */
        public static Request decode(byte[] payload) {
            try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(payload))) {
                return new Request(Wire.list(in), in.readLong());
            } catch (IOException e) {
                throw new IllegalArgumentException("truncated OUTPUTS payload", e);
            }
        }
    }

    /** One file sent: its path relative to the run's directory, its size and SHA-256 (hex). */
    public record Entry(String path, long size, String sha256) {
        public Entry {
            Objects.requireNonNull(path, "path");
            Objects.requireNonNull(sha256, "sha256");
        }
    }

    /** What an agent sent ({@code files}, in index order) and what it did not ({@code skipped}: "PATH: why"). */
    public record Manifest(List<Entry> files, List<String> skipped) {
        public Manifest {
            files = List.copyOf(files);
            skipped = List.copyOf(skipped);
        }

        public byte[] encode() {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            try (DataOutputStream out = new DataOutputStream(bytes)) {
                out.writeInt(files.size());
                for (Entry e : files) {
                    Wire.string(out, e.path());
                    out.writeLong(e.size());
                    Wire.string(out, e.sha256());
                }
                Wire.list(out, skipped);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return bytes.toByteArray();
        }

        /** @throws IllegalArgumentException for bytes that are no manifest */
        public static Manifest decode(byte[] bytes) {
            try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
                int n = in.readInt();
                if (n < 0 || n > in.available() / 16) {
                    throw new IOException("count of " + n);
                }
                List<Entry> files = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    files.add(new Entry(Wire.string(in), in.readLong(), Wire.string(in)));
                }
                return new Manifest(files, Wire.list(in));
            } catch (IOException e) {
                throw new IllegalArgumentException("truncated OUTPUTS manifest", e);
            }
        }
    }
}
