package org.runjob.session;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;

import org.runjob.distribute.Sha256;
import org.runjob.protocol.Outputs;

/**
 * The receiving end of {@link org.runjob.protocol.OutputSender}: OUTPUT_DATA chunks by file index
 * go to temporary files in {@code into/.incoming}; {@link #finish} checks each against the
 * sender's manifest (size and SHA-256) and moves it to its path under {@code into}. A path that
 * would land outside {@code into} is refused. Used by an agent's OUTPUTS answer and by
 * {@code runjob pull} of a submitted run.
 *
 * <p>A chunk of zeros is not written but skipped over, so a sparse file stays sparse where the
 * file system allows. Before a file's data is written, the disk must keep {@value #RESERVE_MIB}
 * MiB free after it: else the outputs stop there, with why, and nothing of them is placed.
 */
public final class OutputReceiver implements AutoCloseable {

    private final Path base;
    private final Path incoming;
    /** What the disk must keep free, in MiB. */
    static final long RESERVE_MIB = 1024;
    /** How often (in bytes written) the free space is looked at again. */
    private static final long CHECK_EVERY = 64L << 20;

    private final Map<Integer, FileChannel> open = new HashMap<>();
    private final Map<Integer, Long> ends = new HashMap<>();
    private final long reserve;
    private long sinceCheck = CHECK_EVERY;
    private IOException failed;

    /** Makes {@code into} (and its {@code .incoming}) when missing. */
    public OutputReceiver(Path into) throws IOException {
        this(into, RESERVE_MIB << 20);
    }

    /** As above, keeping {@code reserveBytes} free on the disk. */
    OutputReceiver(Path into, long reserveBytes) throws IOException {
        this.base = Files.createDirectories(into).toAbsolutePath().normalize();
        this.incoming = Files.createDirectories(base.resolve(".incoming"));
        this.reserve = reserveBytes;
    }

    /** One chunk of file {@code index}; an empty chunk ends that file. A write error is kept for {@link #finish}. */
    public void chunk(int index, byte[] bytes) {
        if (failed != null) {
            return;
        }
        try {
            FileChannel out = open.get(index);
            if (out == null) {
                out = FileChannel.open(incoming.resolve(Integer.toString(index)), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                open.put(index, out);
                ends.put(index, 0L);
            }
            long end = ends.get(index);
            if (bytes.length == 0) {
                if (out.size() < end) {
                    out.write(ByteBuffer.wrap(new byte[1]), end - 1); // the hole up to the end, then its last byte
                }
                ends.remove(index);
                open.remove(index).close();
                return;
            }
            sinceCheck += bytes.length;
            if (sinceCheck >= CHECK_EVERY) {
                sinceCheck = 0;
                long free = Files.getFileStore(incoming).getUsableSpace();
                if (free - CHECK_EVERY < reserve) {
                    throw new IOException("the disk of " + base + " has " + (free >> 20) + " MiB free, and outputs keep "
                            + (reserve >> 20) + " MiB free there: outputs stopped (free some space, then runjob pull)");
                }
            }
            if (!zeros(bytes)) {
                ByteBuffer b = ByteBuffer.wrap(bytes);
                long at = end;
                while (b.hasRemaining()) {
                    at += out.write(b, at);
                }
            }
            ends.put(index, end + bytes.length);
        } catch (IOException e) {
            failed = e;
        }
    }

    /**
     * Checks and places every file the manifest names; {@code from} names the sender in errors.
     *
     * @throws IOException when a chunk could not be written, or a file is not what the manifest says
     */
    public Outputs.Manifest finish(Outputs.Manifest manifest, String from) throws IOException {
        closeStreams();
        if (failed != null) {
            throw failed;
        }
        for (int i = 0; i < manifest.files().size(); i++) {
            Outputs.Entry e = manifest.files().get(i);
            Path got = incoming.resolve(Integer.toString(i));
            if (e.size() < 0) {
                Files.deleteIfExists(got);
                continue;
            }
            Path to = base.resolve(e.path()).normalize();
            if (!to.startsWith(base) || to.equals(base) || to.startsWith(incoming)) {
                throw new IOException(from + " named an output outside the run: " + e.path());
            }
            if (!Files.exists(got) || Files.size(got) != e.size() || !Sha256.of(got).equals(e.sha256())) {
                throw new IOException("output " + e.path() + " did not arrive as " + from + " read it (size or SHA-256 differ)");
            }
            Files.createDirectories(to.getParent());
            Files.move(got, to, StandardCopyOption.REPLACE_EXISTING);
        }
        close();
        return manifest;
    }

    private static boolean zeros(byte[] bytes) {
        for (byte b : bytes) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    private void closeStreams() throws IOException {
        for (FileChannel out : open.values()) {
            out.close();
        }
        open.clear();
        ends.clear();
    }

    /** Closes what is open and removes {@code .incoming} with what is left in it. */
    @Override
    public void close() throws IOException {
        closeStreams();
        if (Files.isDirectory(incoming)) {
            try (var left = Files.list(incoming)) {
                for (Path p : left.toList()) {
                    Files.delete(p);
                }
            }
            Files.delete(incoming);
        }
    }
}
