package org.runjob.protocol;

import java.nio.charset.StandardCharsets;

/**
 * The payloads of STACKS and STACK, built and read here alone: a {@link Request} is the capture's
 * id, then {@code " native"} when py-spy's native frames are wanted too; an {@link Answer} is the
 * id, a newline, then the worker's stacks as text.
 */
public final class Stacks {

    private static final String NATIVE = " native";

    private Stacks() {
    }

    /** What the coordinator asks: a capture id (no spaces, no newline) and whether native frames are wanted. */
    public record Request(String id, boolean nativeFrames) {
        public byte[] encode() {
            return (id + (nativeFrames ? NATIVE : "")).getBytes(StandardCharsets.UTF_8);
        }

        public static Request decode(byte[] payload) {
            String text = new String(payload, StandardCharsets.UTF_8);
            boolean nativeFrames = text.endsWith(NATIVE);
            return new Request(nativeFrames ? text.substring(0, text.length() - NATIVE.length()) : text, nativeFrames);
        }
    }

    /** One worker's answer to a {@link Request}: the capture's id and the stacks. */
    public record Answer(String id, String text) {
        public byte[] encode() {
            return (id + "\n" + text).getBytes(StandardCharsets.UTF_8);
        }

        public static Answer decode(byte[] payload) {
            String text = new String(payload, StandardCharsets.UTF_8);
            int nl = text.indexOf('\n');
            return nl < 0 ? new Answer(text, "") : new Answer(text.substring(0, nl), text.substring(nl + 1));
        }
    }
}
