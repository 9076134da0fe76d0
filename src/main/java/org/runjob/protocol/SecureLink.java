package org.runjob.protocol;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.InvalidKeyException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.KeyAgreement;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * An authenticated, encrypted stream of records between a submitted run's coordinator and a node
 * host ({@code runjob submit}), keyed by the node's key ({@link #nodeKey}: derived from the run's
 * secret, 32 random bytes that travel only over SSH and are never written to a file, an argument
 * or a log), with keys of its own per connection.
 *
 * <ol>
 *   <li>Each side sends {@value #MAGIC}, 32 fresh random bytes and a fresh X25519 public key (X.509
 *       encoding, {@value #PUBLIC_KEY_BYTES} bytes), the client first.</li>
 *   <li>Each direction has its own AES-256-GCM key: HMAC-SHA256(node key, label || client nonce ||
 *       server nonce || client public key || server public key || X25519 shared secret), with the
 *       label {@code runjob c2s} or {@code runjob s2c}. The node key proves who the other side is;
 *       the ephemeral exchange gives forward secrecy: whoever learns the run's secret later still
 *       cannot read a recorded connection, and fresh nonces and keys make a replay fail.</li>
 *   <li>A record is a 4-byte big-endian length, then the ciphertext of one type byte and its
 *       payload; the GCM nonce is the record's sequence number in its direction (a record dropped,
 *       reordered or altered fails its tag).</li>
 *   <li>The first record each way is {@link #HELLO}: the server's proves to the client that it
 *       holds the key too, before the client reads anything else from it.</li>
 *   <li>{@link #close} sends {@link #CLOSE} before it closes the connection, so a link that ends
 *       without one (a cut cable, a peer that died, a forged TCP close) reads as cut
 *       ({@link EOFException}), never as a deliberate end.</li>
 * </ol>
 * A record that fails its tag, or is longer than {@link #MAX_RECORD}, ends the link with a
 * {@link ProtocolException}; nothing of it is used.
 */
public final class SecureLink implements AutoCloseable {

    public static final String MAGIC = "RJL2";
    public static final int KEY_BYTES = 32;
    public static final int MAX_RECORD = (1 << 20) + 64;
    /** The type of the first record each way. */
    public static final byte HELLO = 0;
    /** The type of the last record each way: the sender ends the link on purpose. */
    public static final byte CLOSE = 127;
    /** An X25519 public key in its X.509 encoding. */
    public static final int PUBLIC_KEY_BYTES = 44;
    /** How long {@link #close} waits to hand over its {@link #CLOSE} record before it closes anyway. */
    private static final long CLOSE_WAIT_MS = 2000;
    private static final ScheduledExecutorService CLOSERS = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "link-closer");
        t.setDaemon(true);
        return t;
    });

    private static final int TAG_BITS = 128;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final DataInputStream in;
    private final DataOutputStream out;
    private final AutoCloseable underlying;
    private final Cipher sealer;
    private final Cipher opener;
    private final SecretKeySpec sendKey;
    private final SecretKeySpec receiveKey;
    private final AtomicBoolean closed = new AtomicBoolean();
    private long sent;
    private long received;
    private boolean peerClosed;

    /** One decrypted record. */
    public record Record(byte type, byte[] payload) {
        public String text() {
            return new String(payload, StandardCharsets.UTF_8);
        }

        /** Its type among a node host's ({@link HostRecords.Type}); empty for another. */
        public Optional<HostRecords.Type> kind() {
            return HostRecords.Type.of(type);
        }

        public boolean is(HostRecords.Type t) {
            return type == t.code;
        }
    }

    private SecureLink(InputStream in, OutputStream out, AutoCloseable underlying, byte[] sendKey, byte[] receiveKey)
            throws GeneralSecurityException {
        this.in = new DataInputStream(in);
        this.out = new DataOutputStream(out);
        this.underlying = underlying;
        this.sendKey = new SecretKeySpec(sendKey, "AES");
        this.receiveKey = new SecretKeySpec(receiveKey, "AES");
        this.sealer = Cipher.getInstance("AES/GCM/NoPadding");
        this.opener = Cipher.getInstance("AES/GCM/NoPadding");
    }

    /** A new run secret. */
    public static byte[] newSecret() {
        byte[] k = new byte[KEY_BYTES];
        RANDOM.nextBytes(k);
        return k;
    }

    /** The secret as the one line that carries it over SSH. */
    public static String hex(byte[] secret) {
        return HexFormat.of().formatHex(secret);
    }

    /** @throws IllegalArgumentException unless {@code hex} is a secret's 64 hex digits */
    public static byte[] secret(String hex) {
        byte[] k = HexFormat.of().parseHex(hex.trim());
        if (k.length != KEY_BYTES) {
            throw new IllegalArgumentException("a run secret has " + KEY_BYTES + " bytes, not " + k.length);
        }
        return k;
    }

    /** The key of the node host on {@code node}: HMAC-SHA256(run secret, "runjob node " || node), so one node's key opens no other node. */
    public static byte[] nodeKey(byte[] secret, String node) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            return mac.doFinal(("runjob node " + node).getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("no HmacSHA256 in this Java", e);
        }
    }

    /** The client's side: says hello and checks the server's. */
    public static SecureLink client(InputStream in, OutputStream out, AutoCloseable underlying, byte[] secret) throws IOException {
        return open(in, out, underlying, secret, true);
    }

    /** The server's side: checks the client's hello and says its own. */
    public static SecureLink server(InputStream in, OutputStream out, AutoCloseable underlying, byte[] secret) throws IOException {
        return open(in, out, underlying, secret, false);
    }

    private static SecureLink open(InputStream in, OutputStream out, AutoCloseable underlying, byte[] secret, boolean client)
            throws IOException {
        try {
            return handshake(in, out, underlying, secret, client);
        } catch (IOException | RuntimeException e) {
            try {
                underlying.close(); // the other side hears the end at once, not after its timeout
            } catch (Exception closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
    }

    private static SecureLink handshake(InputStream in, OutputStream out, AutoCloseable underlying, byte[] secret, boolean client)
            throws IOException {
        KeyPair ephemeral;
        try {
            ephemeral = KeyPairGenerator.getInstance("X25519").generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IOException("no X25519 in this Java: " + e.getMessage(), e);
        }
        byte[] mine = new byte[KEY_BYTES];
        RANDOM.nextBytes(mine);
        byte[] myKey = ephemeral.getPublic().getEncoded();
        byte[] magic = MAGIC.getBytes(StandardCharsets.US_ASCII);
        DataInputStream din = new DataInputStream(in);
        byte[] theirs = new byte[KEY_BYTES];
        byte[] theirKey = new byte[PUBLIC_KEY_BYTES];
        byte[] theirMagic = new byte[magic.length];
        if (client) {
            hello(out, magic, mine, myKey);
        }
        din.readFully(theirMagic);
        if (!Arrays.equals(magic, theirMagic)) {
            throw new ProtocolException("the other side does not speak " + MAGIC);
        }
        din.readFully(theirs);
        din.readFully(theirKey);
        if (!client) {
            hello(out, magic, mine, myKey);
        }
        SecureLink link;
        try {
            byte[] shared = agree(ephemeral.getPrivate(), theirKey);
            byte[][] parts = client ? new byte[][] {mine, theirs, myKey, theirKey, shared} : new byte[][] {theirs, mine, theirKey, myKey, shared};
            byte[] c2s = derive(secret, "runjob c2s", parts);
            byte[] s2c = derive(secret, "runjob s2c", parts);
            link = new SecureLink(in, out, underlying, client ? c2s : s2c, client ? s2c : c2s);
        } catch (InvalidKeySpecException | InvalidKeyException e) {
            throw new ProtocolException("the other side sent no X25519 key");
        } catch (GeneralSecurityException e) {
            throw new IOException("no AES-GCM or X25519 in this Java: " + e.getMessage(), e);
        }
        if (client) {
            link.send(HELLO, new byte[0]);
            link.expectHello();
        } else {
            link.expectHello();
            link.send(HELLO, new byte[0]);
        }
        return link;
    }

    private static void hello(OutputStream out, byte[] magic, byte[] nonce, byte[] publicKey) throws IOException {
        out.write(magic);
        out.write(nonce);
        out.write(publicKey);
        out.flush();
    }

    private static byte[] agree(PrivateKey mine, byte[] theirEncoded) throws GeneralSecurityException {
        PublicKey theirs = KeyFactory.getInstance("X25519").generatePublic(new X509EncodedKeySpec(theirEncoded));
        KeyAgreement agreement = KeyAgreement.getInstance("X25519");
        agreement.init(mine);
        agreement.doPhase(theirs, true);
        return agreement.generateSecret();
    }

    private void expectHello() throws IOException {
        Record r;
        try {
            r = receive();
        } catch (EOFException e) {
            r = null; // the other side hung up: it could not open our hello, so it holds another key
        }
        if (r == null || r.type() != HELLO) {
            throw new ProtocolException("the other side did not say hello");
        }
    }

    private static byte[] derive(byte[] secret, String label, byte[]... parts) throws GeneralSecurityException {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret, "HmacSHA256"));
        mac.update(label.getBytes(StandardCharsets.US_ASCII));
        for (byte[] part : parts) {
            mac.update(part);
        }
        return mac.doFinal();
    }

    private static GCMParameterSpec nonce(long sequence) {
        return new GCMParameterSpec(TAG_BITS, ByteBuffer.allocate(12).putInt(0).putLong(sequence).array());
    }

    /** Sends one record. */
    public synchronized void send(byte type, byte[] payload) throws IOException {
        if (closed.get() && type != CLOSE) {
            throw new IOException("the link is closed");
        }
        byte[] plain = new byte[payload.length + 1];
        plain[0] = type;
        System.arraycopy(payload, 0, plain, 1, payload.length);
        byte[] sealed;
        try {
            sealer.init(Cipher.ENCRYPT_MODE, sendKey, nonce(sent++));
            sealed = sealer.doFinal(plain);
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot encrypt a record: " + e.getMessage(), e);
        }
        if (sealed.length > MAX_RECORD) {
            throw new IllegalArgumentException("record of " + sealed.length + " bytes");
        }
        out.writeInt(sealed.length);
        out.write(sealed);
        out.flush();
    }

    public void send(byte type, String text) throws IOException {
        send(type, text.getBytes(StandardCharsets.UTF_8));
    }

    /** Sends one of a node host's records. */
    public void send(HostRecords.Type type, byte[] payload) throws IOException {
        send(type.code, payload);
    }

    public void send(HostRecords.Type type, String text) throws IOException {
        send(type.code, text);
    }

    /**
     * The next record; null once the other side sent {@link #CLOSE}.
     *
     * @throws EOFException when the connection ended without a {@link #CLOSE} record: the link was cut
     */
    public Record receive() throws IOException {
        if (peerClosed) {
            return null;
        }
        int length;
        try {
            length = in.readInt();
        } catch (EOFException e) {
            throw new EOFException("the link was cut: it ended without a close record");
        }
        if (length < 17 || length > MAX_RECORD) {
            throw new ProtocolException("a record of " + length + " bytes");
        }
        byte[] sealed = new byte[length];
        in.readFully(sealed);
        byte[] plain;
        try {
            opener.init(Cipher.DECRYPT_MODE, receiveKey, nonce(received++));
            plain = opener.doFinal(sealed);
        } catch (AEADBadTagException e) {
            throw new ProtocolException("a record failed its check: not from a holder of this run's secret, or altered");
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot decrypt a record: " + e.getMessage(), e);
        }
        if (plain[0] == CLOSE) {
            peerClosed = true;
            return null;
        }
        return new Record(plain[0], Arrays.copyOfRange(plain, 1, plain.length));
    }

    /**
     * Ends the link on purpose: sends {@link #CLOSE} (waiting at most {@value #CLOSE_WAIT_MS} ms for
     * the connection to take it), then closes the connection. Once only; safe from any thread.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        ScheduledFuture<?> cut = CLOSERS.schedule(this::closeUnderlying, CLOSE_WAIT_MS, TimeUnit.MILLISECONDS);
        try {
            send(CLOSE, new byte[0]);
        } catch (IOException | RuntimeException e) {
            // the connection is gone already
        } finally {
            cut.cancel(false);
            closeUnderlying();
        }
    }

    private void closeUnderlying() {
        try {
            underlying.close();
        } catch (Exception e) {
            // closed already
        }
    }
}
