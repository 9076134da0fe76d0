package org.runjob.protocol;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * What an agent found on its node, sent in its HELLO: the node checks preflight reports. Keys are
 * the constants below; an {@code *_error} key is present only when that check failed, and holds the
 * message for the user. Encoded as a count and length-prefixed UTF-8 strings.
 */
public record NodeFacts(Map<String, String> values) {

    /** The protocol version the agent speaks ({@link Handshake#VERSION}). */
    public static final String PROTOCOL = "protocol";
    /** The SHA-256 of the agent's jar, as the bootstrap verified it (absent for an agent started without it). */
    public static final String JAR = "jar";
    public static final String JAVA = "java";
    /**
     * Which machine the agent runs on, as far as its GPUs go: the kernel's boot id and the
     * agent's network namespace. Agents that report the same one see the same GPUs.
     */
    public static final String MACHINE = "machine";
    public static final String PID = "pid";
    public static final String HOST = "host";
    public static final String USER = "user";
    /** The workdir as an absolute path on the node. */
    public static final String WORKDIR = "workdir";
    public static final String WORKDIR_ERROR = "workdir_error";
    public static final String FREE_BYTES = "free_bytes";
    /** A random id stored in the workdir: nodes that report the same one share the workdir. */
    public static final String TOKEN = "token";
    public static final String LOCK_ERROR = "lock_error";
    /**
     * For an agent asked to report variables ({@link AgentOptions#report}): the CUDA_VISIBLE_DEVICES
     * it was started with, the GPUs a scheduler gave it (empty: none).
     */
    public static final String VISIBLE_DEVICES = "visible_devices";

    /** The key of variable {@code name} of the agent's environment, present when it was asked for and is set. */
    public static String variable(String name) {
        return "env." + name;
    }

    public NodeFacts {
        values = Map.copyOf(values);
    }

    public Optional<String> get(String key) {
        return Optional.ofNullable(values.get(key));
    }

    /** The agent's value of variable {@code name}, when it was asked for and is set ({@link #variable}). */
    public Optional<String> variableValue(String name) {
        return get(variable(name));
    }

    public byte[] encode() {
        return Wire.bytes(out -> {
            out.writeInt(values.size());
            for (Map.Entry<String, String> e : values.entrySet()) {
                for (String s : new String[] {e.getKey(), e.getValue()}) {
                    byte[] b = s.getBytes(StandardCharsets.UTF_8);
                    out.writeInt(b.length);
                    out.write(b);
                }
            }
        });
    }

    /** @throws IllegalArgumentException for bytes that are not facts */
    public static NodeFacts decode(byte[] bytes) {
        Map<String, String> values = new LinkedHashMap<>();
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            int n = in.readInt();
            for (int i = 0; i < n; i++) {
                String k = new String(in.readNBytes(checked(in.readInt(), in)), StandardCharsets.UTF_8);
                String v = new String(in.readNBytes(checked(in.readInt(), in)), StandardCharsets.UTF_8);
                values.put(Printable.line(k), Printable.line(v));
            }
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated node facts", e);
        }
        return new NodeFacts(values);
    }

    private static int checked(int n, DataInputStream in) throws IOException {
        if (n < 0 || n > in.available()) {
            throw new IOException("string of " + n + " bytes");
        }
        return n;
    }
}
