package org.runjob.protocol;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The SAMPLE frame's payload: the source's name (US-ASCII), a newline, then its sample, one JSON
 * object on one line (UTF-8). The GPUs' source is {@code gpus}.
 */
public record Sample(String source, byte[] line) {

    public static byte[] encode(String source, String line) {
        byte[] name = source.getBytes(StandardCharsets.US_ASCII);
        byte[] text = line.getBytes(StandardCharsets.UTF_8);
        byte[] out = Arrays.copyOf(name, name.length + 1 + text.length);
        out[name.length] = '\n';
        System.arraycopy(text, 0, out, name.length + 1, text.length);
        return out;
    }

    /** @throws IllegalArgumentException for a payload without the newline after the name */
    public static Sample decode(byte[] payload) {
        for (int i = 0; i < payload.length && i <= 32; i++) {
            if (payload[i] == '\n') {
                return new Sample(new String(payload, 0, i, StandardCharsets.US_ASCII), Arrays.copyOfRange(payload, i + 1, payload.length));
            }
        }
        throw new IllegalArgumentException("a SAMPLE payload without its source's name");
    }
}
