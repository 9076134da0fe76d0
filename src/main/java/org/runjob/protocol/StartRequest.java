package org.runjob.protocol;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The START frame's payload: the node's workers, the stop grace period, and how long the agent may
 * go without any frame from the coordinator (it sends PING every few seconds) before it treats the
 * channel as lost; 0 turns that off.
 *
 * <p>Encoded with {@link DataOutputStream}: a format byte, the two longs, the variables every
 * worker shares (once: 200 workers and a large value stay one copy), then per worker its rank,
 * workdir, argv and its own variables, each string as a length and UTF-8 bytes. Not JSON: loading a JSON
 * library cost every agent about 200 ms of start-up, on every node of every run. Then the variables
 * the node's environment removes ({@code unset}, when activated: a module unload, say) and the
 * container, when the workers run in one (a flag, then {@link ContainerStart}'s fields), and how
 * often the agent samples the node's GPUs ({@code sampleMillis}; 0: never), and the registered
 * observation sources it samples as often ({@code sources}, by name: {@code observe.sources}).
 */
public record StartRequest(List<WorkerStart> workers, long graceMillis, long heartbeatTimeoutMillis, List<String> unset,
                           Optional<ContainerStart> container, long sampleMillis, List<String> sources) {

    private static final byte FORMAT = 5;

    public StartRequest {
        workers = List.copyOf(workers);
        unset = List.copyOf(unset);
        Objects.requireNonNull(container, "container");
        sources = List.copyOf(sources);
    }

    /** Workers with {@code unset} and {@code container}, GPU samples every {@code sampleMillis} (0: none), no other source. */
    public StartRequest(List<WorkerStart> workers, long graceMillis, long heartbeatTimeoutMillis, List<String> unset,
                        Optional<ContainerStart> container, long sampleMillis) {
        this(workers, graceMillis, heartbeatTimeoutMillis, unset, container, sampleMillis, List.of());
    }

    /** Workers that run with the agent's environment, outside any container. */
    public StartRequest(List<WorkerStart> workers, long graceMillis, long heartbeatTimeoutMillis) {
        this(workers, graceMillis, heartbeatTimeoutMillis, List.of(), Optional.empty(), 0);
    }

    /** Workers with {@code unset} and {@code container}, and no GPU samples. */
    public StartRequest(List<WorkerStart> workers, long graceMillis, long heartbeatTimeoutMillis, List<String> unset,
                        Optional<ContainerStart> container) {
        this(workers, graceMillis, heartbeatTimeoutMillis, unset, container, 0);
    }

    public byte[] encode() {
        Map<String, String> shared = shared();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(FORMAT);
            out.writeLong(graceMillis);
            out.writeLong(heartbeatTimeoutMillis);
            map(out, shared);
            out.writeInt(workers.size());
            for (WorkerStart w : workers) {
                out.writeInt(w.rank());
                string(out, w.workdir());
                out.writeInt(w.argv().size());
                for (String a : w.argv()) {
                    string(out, a);
                }
                Map<String, String> own = new LinkedHashMap<>(w.env());
                own.keySet().removeAll(shared.keySet());
                map(out, own);
            }
            Wire.list(out, unset);
            out.writeBoolean(container.isPresent());
            if (container.isPresent()) {
                container.get().encode(out);
            }
            out.writeLong(sampleMillis);
            Wire.list(out, sources);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a byte array does not fail
        }
        return bytes.toByteArray();
    }

    /** The variables every worker gets with the same value: sent once, however many workers there are. */
    private Map<String, String> shared() {
        Map<String, String> shared = new LinkedHashMap<>(workers.isEmpty() ? Map.of() : workers.get(0).env());
        for (WorkerStart w : workers) {
            shared.entrySet().removeIf(e -> !e.getValue().equals(w.env().get(e.getKey())));
        }
        return shared;
    }

    /** @throws IllegalArgumentException for bytes that are not a START payload of this format */
    public static StartRequest decode(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            byte format = in.readByte();
            if (format != FORMAT) {
                throw new IllegalArgumentException("START payload format " + format + ", expected " + FORMAT);
            }
            long grace = in.readLong();
            long heartbeat = in.readLong();
            Map<String, String> shared = map(in);
            int n = in.readInt();
            List<WorkerStart> workers = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int rank = in.readInt();
                String workdir = string(in);
                int argc = in.readInt();
                List<String> argv = new ArrayList<>();
                for (int j = 0; j < argc; j++) {
                    argv.add(string(in));
                }
                Map<String, String> env = new LinkedHashMap<>(shared);
                env.putAll(map(in));
                workers.add(new WorkerStart(rank, argv, env, workdir));
            }
            List<String> unset = Wire.list(in);
            Optional<ContainerStart> container = in.readBoolean() ? Optional.of(ContainerStart.decode(in)) : Optional.empty();
            long sample = in.readLong();
            return new StartRequest(workers, grace, heartbeat, unset, container, sample, Wire.list(in));
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated START payload", e);
        }
    }

    private static void map(DataOutputStream out, Map<String, String> map) throws IOException {
        out.writeInt(map.size());
        for (Map.Entry<String, String> e : map.entrySet()) {
            string(out, e.getKey());
            string(out, e.getValue());
        }
    }

    private static Map<String, String> map(DataInputStream in) throws IOException {
        int n = in.readInt();
        Map<String, String> map = new LinkedHashMap<>();
        for (int j = 0; j < n; j++) {
            map.put(string(in), string(in));
        }
        return map;
    }

    private static void string(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    private static String string(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > in.available()) {
            throw new IOException("string of " + n + " bytes");
        }
        return new String(in.readNBytes(n), StandardCharsets.UTF_8);
    }
}
