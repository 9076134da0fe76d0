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
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * An authenticated, encrypted stream of records between a submitted run's coordinator and a node
 * host ({@code runjob submit}), keyed by the run's secret: 32 random bytes that travel only over
 * SSH (the launcher's logins) and are never written to a file, an argument or a log.
 *
 * <ol>
 *   <li>Each side sends {@value #MAGIC} and 32 fresh random bytes (client first).</li>
 *   <li>Each direction has its own AES-256-GCM key: HMAC-SHA256(secret, label || client nonce ||
 *       server nonce), with the label {@code runjob c2s} or {@code runjob s2c}. Fresh nonces on both
 *       sides make the keys of every connection new: a recorded connection cannot be replayed.</li>
 *   <li>A record is a 4-byte big-endian length, then the ciphertext of one type byte and its
 *       payload; the GCM nonce is the record's sequence number in its direction (a record dropped,
 *       reordered or altered fails its tag).</li>
 *   <li>The first record each way is {@link #HELLO}: the server's proves to the client that it
 *       holds the secret too, before the client reads anything else from it.</li>
 * </ol>
 * A record that fails its tag, or is longer than {@link #MAX_RECORD}, ends the link with a
 * {@link ProtocolException}; nothing of it is used.
 */
public final class SecureLink implements AutoCloseable {

    public static final String MAGIC = "RJL1";
    public static final int KEY_BYTES = 32;
    public static final int MAX_RECORD = (1 << 20) + 64;
    /** The type of the first record each way. */
    public static final byte HELLO = 0;

    private static final int TAG_BITS = 128;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final DataInputStream in;
    private final DataOutputStream out;
    private final AutoCloseable underlying;
    private final Cipher sealer;
    private final Cipher opener;
    private final SecretKeySpec sendKey;
    private final SecretKeySpec receiveKey;
    private long sent;
    private long received;

    /** One decrypted record. */
    public record Record(byte type, byte[] payload) {
        public String text() {
            return new String(payload, StandardCharsets.UTF_8);
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
        byte[] mine = new byte[KEY_BYTES];
        RANDOM.nextBytes(mine);
        byte[] magic = MAGIC.getBytes(StandardCharsets.US_ASCII);
        DataInputStream din = new DataInputStream(in);
        byte[] theirs = new byte[KEY_BYTES];
        byte[] theirMagic = new byte[magic.length];
        if (client) {
            out.write(magic);
            out.write(mine);
            out.flush();
        }
        din.readFully(theirMagic);
        if (!Arrays.equals(magic, theirMagic)) {
            throw new ProtocolException("the other side does not speak " + MAGIC);
        }
        din.readFully(theirs);
        if (!client) {
            out.write(magic);
            out.write(mine);
            out.flush();
        }
        byte[] cn = client ? mine : theirs;
        byte[] sn = client ? theirs : mine;
        SecureLink link;
        try {
            byte[] c2s = derive(secret, "runjob c2s", cn, sn);
            byte[] s2c = derive(secret, "runjob s2c", cn, sn);
            link = new SecureLink(in, out, underlying, client ? c2s : s2c, client ? s2c : c2s);
        } catch (GeneralSecurityException e) {
            throw new IOException("no AES-GCM in this Java: " + e.getMessage(), e);
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

    private void expectHello() throws IOException {
        Record r = receive();
        if (r == null || r.type() != HELLO) {
            throw new ProtocolException("the other side did not say hello");
        }
    }

    private static byte[] derive(byte[] secret, String label, byte[] clientNonce, byte[] serverNonce) throws GeneralSecurityException {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret, "HmacSHA256"));
        mac.update(label.getBytes(StandardCharsets.US_ASCII));
        mac.update(clientNonce);
        mac.update(serverNonce);
        return mac.doFinal();
    }

    private static GCMParameterSpec nonce(long sequence) {
        return new GCMParameterSpec(TAG_BITS, ByteBuffer.allocate(12).putInt(0).putLong(sequence).array());
    }

    /** Sends one record. */
    public synchronized void send(byte type, byte[] payload) throws IOException {
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

    /** The next record; null at a clean end of the stream (between records). */
    public Record receive() throws IOException {
        int length;
        try {
            length = in.readInt();
        } catch (EOFException e) {
            return null;
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
        return new Record(plain[0], Arrays.copyOfRange(plain, 1, plain.length));
    }

    @Override
    public void close() {
        try {
            underlying.close();
        } catch (Exception e) {
            // closed already
        }
    }
}
