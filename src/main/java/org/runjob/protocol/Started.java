package org.runjob.protocol;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * A STARTED frame's payload: the worker's pid and its process-tree token (what the coordinator's
 * last-resort cleanup finds the worker's processes by). Wire form: int64 pid, then the token in UTF-8.
 */
public record Started(long pid, String token) {

    public Started {
        Objects.requireNonNull(token, "token");
    }

    public byte[] encode() {
        byte[] t = token.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(8 + t.length).putLong(pid).put(t).array();
    }

    /** @throws ProtocolException for a payload too short to hold a pid */
    public static Started decode(byte[] payload) throws ProtocolException {
        if (payload.length < 8) {
            throw new ProtocolException("a STARTED payload of " + payload.length + " bytes holds no pid");
        }
        return new Started(ByteBuffer.wrap(payload).getLong(), new String(Arrays.copyOfRange(payload, 8, payload.length), StandardCharsets.UTF_8));
    }
}
