package org.runjob.protocol;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The METRICS frame's payload: when the agent read the lines (epoch milliseconds, 8 bytes, big
 * endian), then the complete lines a worker appended to its RUNJOB_METRICS_FILE. Each line is
 * tagged with that time: the agent reads every 50 ms, so step times come within that of the
 * worker's own, whatever the channel's delay.
 */
public record MetricsChunk(long readMillis, byte[] lines) {

    public static byte[] encode(long readMillis, byte[] lines) {
        return ByteBuffer.allocate(Long.BYTES + lines.length).putLong(readMillis).put(lines).array();
    }

    /** @throws IllegalArgumentException for a payload too short to hold the time */
    public static MetricsChunk decode(byte[] payload) {
        if (payload.length < Long.BYTES) {
            throw new IllegalArgumentException("a METRICS payload of " + payload.length + " bytes");
        }
        return new MetricsChunk(ByteBuffer.wrap(payload).getLong(), Arrays.copyOfRange(payload, Long.BYTES, payload.length));
    }
}
