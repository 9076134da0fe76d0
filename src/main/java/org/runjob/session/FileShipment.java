package org.runjob.session;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.runjob.distribute.FileList;
import org.runjob.distribute.Sha256;
import org.runjob.distribute.Shipped;
import org.runjob.protocol.Answer;
import org.runjob.protocol.FileManifest;
import org.runjob.protocol.FileNeeds;
import org.runjob.protocol.Frame;
import org.runjob.protocol.PortRequest;

/**
 * The job's files to one node's agent, over its {@link NodeSession}: the agent is told what its
 * workdir should hold and answers what it lacks ({@link #offer}); exactly that comes over the
 * session ({@link #send}) or from a peer that serves it ({@link #fetch}, {@link #serve}), and the
 * agent writes it safely ({@link org.runjob.agent.FileReceiver}). Each exchange holds the session
 * as its other requests do.
 */
public final class FileShipment {

    /** Files are sent in frames of this size. */
    static final int CHUNK = 1 << 20;

    private final NodeSession session;

    FileShipment(NodeSession session) {
        this.session = session;
    }

    /**
     * Tells the agent what its workdir should hold ({@code files}); it answers which files it lacks.
     * Sends nothing yet: {@link #send} or {@link #fetch} then brings exactly those, and the agent
     * writes them safely ({@link org.runjob.agent.FileReceiver}).
     */
    public FileOffer offer(List<FileList.Entry> files) throws IOException {
        synchronized (session) {
            return offerLocked(files);
        }
    }

    /**
     * Sends the files an {@link #offer} found missing, over this channel, in chunks.
     *
     * @param progress gets a line now and then while a large file is on its way ("train.bin 40% of 100 MiB")
     */
    public Shipped send(FileOffer offer, Consumer<String> progress) throws IOException {
        synchronized (session) {
            return sendLocked(offer, progress);
        }
    }

    /**
     * Has the agent fetch the files an {@link #offer} found missing from a peer that serves them
     * ({@link #serve}); the agent verifies them against the offer's manifest as it does what this
     * channel sends. Fails, leaving no partial file, when the peer cannot be reached or sends
     * anything else.
     *
     * @param peer the serving node's name, for the record
     */
    public Shipped fetch(FileOffer offer, String peer, String host, int port, String key) throws IOException {
        synchronized (session) {
            return fetchLocked(offer, peer, host, port, key);
        }
    }

    private FileOffer offerLocked(List<FileList.Entry> files) throws IOException {
        List<FileManifest.Entry> entries = new ArrayList<>();
        for (FileList.Entry f : files) {
            entries.add(new FileManifest.Entry(f.destination(), Files.size(f.source()),
                    Files.getLastModifiedTime(f.source()).to(TimeUnit.SECONDS), mode(f.source()), Sha256.ofSource(f.source())));
        }
        FileNeeds answer;
        try {
            answer = FileNeeds.decode(session.exchange(Frame.Type.FILES, new FileManifest(entries).encode(), 600_000).payload());
        } catch (IllegalArgumentException e) {
            throw new IOException("the agent answered FILES with no answer: " + e.getMessage());
        }
        if (answer.failure().isPresent()) {
            throw new IOException(answer.failure().get());
        }
        if (answer.needed().size() != entries.size()) {
            throw new IOException("the agent answered the file list for " + answer.needed().size() + " of " + entries.size() + " files");
        }
        return new FileOffer(files, entries, answer.needed());
    }

    private Shipped sendLocked(FileOffer offer, Consumer<String> progress) throws IOException {
        for (int i = 0; i < offer.entries().size(); i++) {
            if (offer.needs().get(i)) {
                send(i, offer.files().get(i).source(), offer.entries().get(i), progress);
            }
        }
        NodeSession.end(session.answer(Frame.Type.FILE_DATA, new byte[0], 120_000));
        return offer.shipped(Optional.empty());
    }

    private Shipped fetchLocked(FileOffer offer, String peer, String host, int port, String key) throws IOException {
        // the agent ends a stalled relay after FileRelay.READ_TIMEOUT_MS without data: this deadline only covers a hung agent
        Answer answer = session.answer(Frame.Type.FETCH, PortRequest.fetch(host, port, key).encode(), 6 * 3_600_000L);
        if (!answer.ok()) {
            throw new RelayFailed(answer.failure().get());
        }
        return offer.shipped(Optional.of(peer));
    }

    /** The agent could not fetch from its peer (it answered why); the agent itself is fine. */
    public static final class RelayFailed extends IOException {
        RelayFailed(String message) {
            super(message);
        }
    }

    /** Has the agent serve the files it holds to peers that know {@code key}: the port it serves on, or why not. */
    public Answer serve(String key) throws IOException {
        return session.answer(Frame.Type.SERVE, PortRequest.serve(key).encode(), 30_000);
    }

    /** Stops serving files to peers. */
    public void unserve() throws IOException {
        session.answer(Frame.Type.UNSERVE, new byte[0], 30_000);
    }

    private void send(int index, Path source, FileManifest.Entry e, Consumer<String> progress) throws IOException {
        TransferProgress p = new TransferProgress(source.getFileName().toString(), e.size(), progress);
        try (InputStream in = Files.newInputStream(source)) {
            byte[] buf = new byte[CHUNK];
            int n;
            while ((n = in.readNBytes(buf, 0, CHUNK)) > 0) {
                session.send(new Frame(Frame.Type.FILE_DATA, index, Arrays.copyOf(buf, n)));
                p.add(n);
            }
        }
        session.send(new Frame(Frame.Type.FILE_DATA, index, new byte[0]));
    }

    private static int mode(Path file) throws IOException {
        int mode = 0;
        for (PosixFilePermission p : Files.getPosixFilePermissions(file)) {
            mode |= 1 << (8 - p.ordinal());
        }
        return mode;
    }
}
