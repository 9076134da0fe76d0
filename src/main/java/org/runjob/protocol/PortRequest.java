package org.runjob.protocol;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;

/**
 * The payload of LISTEN (bind {@code port} as rank 0's store will; {@code timeoutMs} 0), CONNECT
 * (connect to {@code addr}:{@code port} within {@code timeoutMs}) and FETCH (the job's files from
 * the peer serving them at {@code addr}:{@code port}, proving {@code key}); SERVE's is the key
 * alone. Each is answered by one {@link Answer}.
 *
 * @param key the relay's key (hex), empty for LISTEN and CONNECT
 */
public record PortRequest(String addr, int port, int timeoutMs, String key) {

    private static final byte FORMAT = 1;

    public PortRequest {
        if (port < 0 || port > 65535 || timeoutMs < 0) {
            throw new IllegalArgumentException("port " + port + " and timeout " + timeoutMs + " ms out of range");
        }
    }

    public static PortRequest listen(String addr, int port) {
        return new PortRequest(addr, port, 0, "");
    }

    public static PortRequest connect(String addr, int port, int timeoutMs) {
        return new PortRequest(addr, port, timeoutMs, "");
    }

    public static PortRequest fetch(String host, int port, String key) {
        return new PortRequest(host, port, 0, key);
    }

    /** SERVE: only the key. */
    public static PortRequest serve(String key) {
        return new PortRequest("", 0, 0, key);
    }

    public byte[] encode() {
        return Wire.bytes(out -> {
            out.writeByte(FORMAT);
            Wire.string(out, addr);
            out.writeInt(port);
            out.writeInt(timeoutMs);
            Wire.string(out, key);
        });
    }

    /** @throws IllegalArgumentException for bytes that are not such a payload of this format */
    public static PortRequest decode(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            byte format = in.readByte();
            if (format != FORMAT) {
                throw new IllegalArgumentException("request format " + format + ", expected " + FORMAT);
            }
            PortRequest r = new PortRequest(Wire.string(in), in.readInt(), in.readInt(), Wire.string(in));
            if (in.available() > 0) {
                throw new IllegalArgumentException("a request with " + in.available() + " bytes too many");
            }
            return r;
        } catch (IOException e) {
            throw new IllegalArgumentException("a truncated request", e);
        }
    }
}
