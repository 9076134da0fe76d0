package org.runjob.session;

import java.io.IOException;
import java.io.OutputStream;
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
 */
public final class OutputReceiver implements AutoCloseable {

    private final Path base;
    private final Path incoming;
    private final Map<Integer, OutputStream> open = new HashMap<>();
    private IOException failed;

    /** Makes {@code into} (and its {@code .incoming}) when missing. */
    public OutputReceiver(Path into) throws IOException {
        this.base = Files.createDirectories(into).toAbsolutePath().normalize();
        this.incoming = Files.createDirectories(base.resolve(".incoming"));
    }

    /** One chunk of file {@code index}; an empty chunk ends that file. A write error is kept for {@link #finish}. */
    public void chunk(int index, byte[] bytes) {
        if (failed != null) {
            return;
        }
        try {
            OutputStream out = open.get(index);
            if (out == null) {
                out = Files.newOutputStream(incoming.resolve(Integer.toString(index)), StandardOpenOption.CREATE_NEW);
                open.put(index, out);
            }
            if (bytes.length == 0) {
                open.remove(index).close();
            } else {
                out.write(bytes);
            }
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

    private void closeStreams() throws IOException {
        for (OutputStream out : open.values()) {
            out.close();
        }
        open.clear();
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
