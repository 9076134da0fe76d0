package org.runjob.agent;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.runjob.protocol.Answer;
import org.runjob.protocol.FileManifest;

/**
 * Relay distribution between agents, over plain TCP: a node that holds the run's files serves them
 * to its peers, so the coordinator sends each file once or a few times instead of once per node.
 *
 * <p>Contract:
 * <ul>
 *   <li>{@link #serve}: listens on a free port of every address and serves the files of the last
 *       transfer that ended well ({@link FileReceiver#held}), until {@link #close}. Only a peer that
 *       proves it knows the run's relay key (HMAC-SHA256 of a fresh nonce; the key itself never
 *       crosses the network) gets anything, and only files of that manifest, asked for by index and
 *       SHA-256, read without following a symlink.</li>
 *   <li>{@link #fetch}: after a FILES manifest said which files this node needs, fetches exactly those
 *       from a serving peer into the {@link FileReceiver}, which verifies each file's size and SHA-256
 *       against the manifest the coordinator sent (over SSH) before renaming it into place. A broken
 *       connection, a refusal or damaged bytes fail the transfer and leave no partial file; the
 *       coordinator then sends directly.</li>
 * </ul>
 *
 * <p>Wire format, both directions {@link DataOutputStream}: the server sends a 32-byte nonce; the
 * client answers with HMAC-SHA256(key, nonce) and the wanted files (count, then index and SHA-256
 * each); the server sends per file its index and size, then the bytes, or index -1 and a reason.
 * The bytes are not encrypted: like the job's own gloo/NCCL traffic, they cross the cluster network in
 * the clear ({@code relay: never} keeps them on the coordinator's SSH channels).
 */
final class FileRelay implements AutoCloseable {

    static final int CONNECT_TIMEOUT_MS = 10_000;
    /**
     * A peer must prove it knows the key and say which files it wants within this long, in all (a
     * deadline, as OpenSSH's LoginGraceTime, not a per-read timeout: a byte every few seconds does
     * not extend it); until it has, it holds one of {@link #MAX_PEERS}.
     */
    static final int HANDSHAKE_TIMEOUT_MS = 10_000;
    /**
     * Peers served at once (one thread each). More connections wait in the listen backlog, so
     * connections that never authenticate cost at most this many threads, each for at most
     * {@link #HANDSHAKE_TIMEOUT_MS}.
     */
    static final int MAX_PEERS = 32;
    /** How long the acceptor backs off after accept fails (out of file descriptors, say) before it tries again. */
    static final int ACCEPT_BACKOFF_MS = 200;
    /** A peer that sends nothing for this long has failed. */
    static final int READ_TIMEOUT_MS = 60_000;
    private static final int CHUNK = 1 << 20;
    private static final int NONCE = 32;
    private static final int REFUSED = -2;

    private static final ScheduledExecutorService DEADLINES = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "relay-deadlines");
        t.setDaemon(true);
        return t;
    });

    private final FileReceiver receiver;
    private final int handshakeMs;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final Semaphore peers = new Semaphore(MAX_PEERS);
    private ServerSocket server;
    private Thread acceptor;

    FileRelay(FileReceiver receiver) {
        this(receiver, HANDSHAKE_TIMEOUT_MS);
    }

    /** A relay whose peers have {@code handshakeMs} to authenticate and ask (tests shorten it). */
    FileRelay(FileReceiver receiver, int handshakeMs) {
        this.receiver = receiver;
        this.handshakeMs = handshakeMs;
    }

    /** SERVE KEY: the port it serves on, or why it cannot. */
    synchronized Answer serve(String keyHex) {
        closeServer();
        if (receiver.held().isEmpty()) {
            return Answer.failed("no files to serve");
        }
        try {
            byte[] key = HexFormat.of().parseHex(keyHex);
            ServerSocket s = new ServerSocket();
            s.bind(new InetSocketAddress(0), MAX_PEERS);
            server = s;
            acceptor = new Thread(() -> accept(s, key, receiver.held()), "relay-serve");
            acceptor.setDaemon(true);
            acceptor.start();
            return Answer.done(s.getLocalPort(), "-");
        } catch (IOException | IllegalArgumentException e) {
            return Answer.failed("cannot serve: " + e.getMessage());
        }
    }

    /**
     * Accepts while the server is open, one thread per peer and at most {@link #MAX_PEERS} at once;
     * a failed accept (too many open files) backs off instead of spinning.
     */
    private void accept(ServerSocket s, byte[] k, List<FileManifest.Entry> files) {
        while (!s.isClosed()) {
            try {
                peers.acquire();
            } catch (InterruptedException e) {
                return;
            }
            Socket peer;
            try {
                peer = s.accept();
            } catch (IOException e) {
                peers.release();
                if (!s.isClosed()) {
                    backOff();
                }
                continue;
            }
            if (s.isClosed()) {
                // accepted while the server was being closed: closeServer has returned or is about to,
                // and nothing is served after it
                closeQuietly(peer);
                peers.release();
                return;
            }
            open.add(peer);
            Thread t = new Thread(() -> {
                // the socket is closed at the deadline unless the peer proved the key and asked by then
                ScheduledFuture<?> deadline = DEADLINES.schedule(() -> closeQuietly(peer), handshakeMs, TimeUnit.MILLISECONDS);
                try (peer) {
                    peer.setSoTimeout(READ_TIMEOUT_MS);
                    serveOne(peer, k, files, deadline);
                } catch (IOException e) {
                    // the peer went away or failed the handshake: its fetch says why
                } finally {
                    deadline.cancel(false);
                    open.remove(peer);
                    peers.release();
                }
            }, "relay-peer");
            t.setDaemon(true);
            t.start();
        }
    }

    private static void backOff() {
        try {
            Thread.sleep(ACCEPT_BACKOFF_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void serveOne(Socket peer, byte[] k, List<FileManifest.Entry> files, ScheduledFuture<?> deadline) throws IOException {
        DataInputStream in = new DataInputStream(new BufferedInputStream(peer.getInputStream()));
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(peer.getOutputStream(), CHUNK));
        byte[] nonce = new byte[NONCE];
        new SecureRandom().nextBytes(nonce);
        out.write(nonce);
        out.flush();
        byte[] proof = in.readNBytes(32);
        if (!MessageDigest.isEqual(proof, hmac(k, nonce))) {
            out.writeInt(REFUSED);
            out.flush();
            return;
        }
        int count = in.readInt();
        if (count < 0 || count > files.size()) {
            return;
        }
        List<Integer> wanted = new ArrayList<>();
        List<String> shas = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            wanted.add(in.readInt());
            shas.add(in.readUTF());
        }
        if (!deadline.cancel(false)) {
            return; // too late: the socket is closed already
        }
        for (int i = 0; i < count; i++) {
            int index = wanted.get(i);
            if (index < 0 || index >= files.size() || !files.get(index).sha256().equals(shas.get(i))) {
                refuse(out, "this node does not hold file " + index + " with SHA-256 " + shas.get(i));
                return;
            }
            FileManifest.Entry e = files.get(index);
            try (SeekableByteChannel file = receiver.read(e)) {
                if (file.size() != e.size()) {
                    refuse(out, e.dest() + " changed here since it arrived (" + file.size() + " bytes, not " + e.size() + ")");
                    return;
                }
                out.writeInt(index);
                out.writeLong(e.size());
                long sent = 0;
                ByteBuffer buf = ByteBuffer.allocate(CHUNK);
                while (sent < e.size()) {
                    buf.clear().limit((int) Math.min(CHUNK, e.size() - sent));
                    int n = file.read(buf);
                    if (n < 0) {
                        throw new EOFException(e.dest() + " shrank while it was relayed");
                    }
                    out.write(buf.array(), 0, n);
                    sent += n;
                }
            } catch (IOException ex) {
                refuse(out, "cannot read " + e.dest() + ": " + WorkdirGuard.reason(ex));
                return;
            }
        }
        out.flush();
    }

    private static void refuse(DataOutputStream out, String why) throws IOException {
        out.writeInt(-1);
        out.writeUTF(why);
        out.flush();
    }

    /**
     * FETCH HOST PORT KEY, after a FILES manifest: the needed files from the peer serving at
     * HOST:PORT. Answers as the end of a transfer does: the bytes written, or why not.
     */
    Answer fetch(String host, int port, String keyHex) {
        List<Integer> needed = receiver.needed();
        String from = "relay from " + host + ":" + port;
        try (Socket s = new Socket()) {
            open.add(s);
            s.connect(new InetSocketAddress(host, port), CONNECT_TIMEOUT_MS);
            s.setSoTimeout(READ_TIMEOUT_MS);
            s.setReceiveBufferSize(4 << 20);
            DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream(), CHUNK));
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
            byte[] nonce = in.readNBytes(NONCE);
            if (nonce.length != NONCE) {
                throw new EOFException("the peer closed the connection");
            }
            out.write(hmac(HexFormat.of().parseHex(keyHex), nonce));
            out.writeInt(needed.size());
            for (int index : needed) {
                out.writeInt(index);
                out.writeUTF(receiver.entry(index).sha256());
            }
            out.flush();
            byte[] buf = new byte[CHUNK];
            for (int index : needed) {
                int got = in.readInt();
                if (got == REFUSED) {
                    throw new IOException("the peer refused the relay key");
                }
                if (got == -1) {
                    throw new IOException(in.readUTF());
                }
                long size = in.readLong();
                if (got != index || size != receiver.entry(index).size()) {
                    throw new IOException("the peer sent file " + got + " (" + size + " bytes) for file " + index);
                }
                long left = size;
                while (left > 0) {
                    int n = in.read(buf, 0, (int) Math.min(buf.length, left));
                    if (n < 0) {
                        throw new EOFException("the peer closed the connection after " + (size - left) + " of " + size + " bytes");
                    }
                    receiver.data(index, buf, n);
                    left -= n;
                }
                receiver.data(index, new byte[0]);
                if (receiver.failed()) {
                    break;
                }
            }
        } catch (SocketTimeoutException e) {
            receiver.abort(from + ": no data for " + READ_TIMEOUT_MS / 1000 + " s");
        } catch (IOException | IllegalArgumentException e) {
            receiver.abort(from + ": " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
        } finally {
            open.removeIf(Socket::isClosed);
        }
        return receiver.data(-1, new byte[0]);
    }

    private static byte[] hmac(byte[] key, byte[] nonce) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(nonce);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e); // every JDK has HmacSHA256
        }
    }

    /**
     * Stops serving: no new peer is accepted; transfers under way go on. Returns once the acceptor
     * has ended, so the listening socket is released: a socket closed while another thread is blocked
     * in accept stays open until that thread leaves it, and a peer that connects in that window
     * is refused.
     */
    synchronized void closeServer() {
        if (server != null) {
            closeQuietly(server);
            acceptor.interrupt();
            try {
                acceptor.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            server = null;
            acceptor = null;
        }
    }

    private static void closeQuietly(Closeable c) {
        try {
            c.close();
        } catch (IOException e) {
            // closed
        }
    }

    /** Stops serving and breaks every connection, served or fetching. */
    @Override
    public void close() {
        closeServer();
        for (Socket s : open) {
            closeQuietly(s);
        }
    }
}
