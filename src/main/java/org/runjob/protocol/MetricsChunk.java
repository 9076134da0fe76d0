package org.runjob.protocol;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The METRICS frame's payload: when the agent read the lines (epoch milliseconds, 8 bytes, big
 * endian), how many bytes of the file it skipped since the last chunk (8 bytes: the file grew
 * faster than the agent forwards it), then the complete lines a worker appended to its
 * RUNJOB_METRICS_FILE. Each line is
 * tagged with that time: the agent reads every 50 ms, so step times come within that of the
 * worker's own, whatever the channel's delay.
 */
public record MetricsChunk(long readMillis, long skippedBytes, byte[] lines) {

    private static final int HEADER = 2 * Long.BYTES;
    /** How fast an agent forwards one rank's metrics file at most, in MiB/s: what grows faster is skipped, and counted. */
    public static final int FORWARD_MIB_PER_S = 1;

    public static byte[] encode(long readMillis, long skippedBytes, byte[] lines) {
        return ByteBuffer.allocate(HEADER + lines.length).putLong(readMillis).putLong(skippedBytes).put(lines).array();
    }

    /** @throws IllegalArgumentException for a payload too short to hold the time */
    public static MetricsChunk decode(byte[] payload) {
        if (payload.length < HEADER) {
            throw new IllegalArgumentException("a METRICS payload of " + payload.length + " bytes");
        }
        ByteBuffer b = ByteBuffer.wrap(payload);
        return new MetricsChunk(b.getLong(), b.getLong(), Arrays.copyOfRange(payload, HEADER, payload.length));
    }
}
