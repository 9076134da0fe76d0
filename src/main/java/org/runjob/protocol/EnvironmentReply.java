package org.runjob.protocol;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The agent's answer to an {@link EnvironmentRequest}: facts under the keys below (an
 * {@code *_error} key only when that step failed, with the message for the user), and what the
 * activation changed in the environment it was given: the variables it {@code set} (new or
 * changed) and those it {@code unset}. The workers get exactly these changes. Sent as one REPLY,
 * its bytes as they are.
 */
public record EnvironmentReply(Map<String, String> facts, Map<String, String> set, List<String> unset) {

    /** Why the environment could not be activated (a module, a script, conda), with the last lines it printed. */
    public static final String ACTIVATION_ERROR = "activation_error";
    public static final String PROGRAM_ERROR = "program_error";
    /** The program as the workers run it: a Python's {@code sys.executable}, else the path found. */
    public static final String PROGRAM_PATH = "program_path";
    public static final String PYTHON = "python";
    public static final String TORCH = "torch";
    /** torch's {@code torch.version.cuda}: {@code -} for a CPU build. */
    public static final String CUDA = "cuda";
    /** The NCCL version torch was built with, where its package says. */
    public static final String NCCL = "nccl";
    /** {@code ran}, {@code up to date}, {@code due} (a check) or {@code none}. */
    public static final String SETUP = "setup";
    public static final String SETUP_SECONDS = "setup_seconds";
    public static final String SETUP_ERROR = "setup_error";
    /** The container's image as the runtime knows it, and its digest. */
    public static final String IMAGE = "image";
    public static final String IMAGE_DIGEST = "image_digest";
    public static final String CONTAINER_ERROR = "container_error";
    /** The size of /dev/shm inside the container, in bytes. */
    public static final String SHM_BYTES = "shm_bytes";

    public EnvironmentReply {
        facts = Map.copyOf(facts);
        set = Map.copyOf(set);
        unset = List.copyOf(unset);
    }

    public Optional<String> get(String key) {
        return Optional.ofNullable(facts.get(key));
    }

    public byte[] encode() {
        return Wire.bytes(out -> {
            Wire.map(out, facts);
            Wire.map(out, set);
            Wire.list(out, unset);
        });
    }

    /** @throws IllegalArgumentException for bytes that are not a reply */
    public static EnvironmentReply decode(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            Map<String, String> facts = new LinkedHashMap<>();
            Wire.map(in).forEach((k, v) -> facts.put(Printable.line(k), Printable.text(v)));
            EnvironmentReply reply = new EnvironmentReply(facts, Wire.map(in), Wire.list(in));
            if (in.available() > 0) {
                throw new IllegalArgumentException("bytes after the ENVIRONMENT reply: " + in.available());
            }
            return reply;
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated ENVIRONMENT reply", e);
        }
    }
}
