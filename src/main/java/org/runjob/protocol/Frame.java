package org.runjob.protocol;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.util.Objects;

/**
 * One message between coordinator and agent: {@code type (1 byte), rank (int32), length (int32),
 * payload (length bytes)}, big-endian. Worker output travels only inside a payload whose length is
 * fixed up front, so nothing a worker prints can end a frame early or forge another one.
 * {@code docs/protocol.md} describes every type; a test keeps it in step with {@link Type}.
 *
 * @param rank the worker the frame is about, or -1 (FILE_DATA: the file's index)
 */
public record Frame(Type type, int rank, byte[] payload) {

    /** The largest payload accepted; output is sent in chunks well below it. */
    public static final int MAX_PAYLOAD = 16 * 1024 * 1024;

    /** Who sends a frame type. */
    public enum Direction {
        /** Coordinator to agent: ids 1-63. */
        TO_AGENT,
        /** Agent to coordinator: ids 64-127. */
        TO_COORDINATOR
    }

    /** The catalogue: every frame type, its wire id, grouped by direction. */
    public enum Type {
        // coordinator -> agent: supervision
        START(1), STOP(2), KILL(3), PING(4),
        // coordinator -> agent: preflight requests, each answered by one REPLY, one at a time
        FILES(5), FILE_DATA(6), LISTEN(7), CONNECT(8), UNLISTEN(9), PROBE_GPUS(10), LEASE(11), SERVE(12), FETCH(13), UNSERVE(14),
        // coordinator -> agent: while workers run, answered by one STACK per running worker
        STACKS(15),
        // coordinator -> agent: preflight, after the files: activate the environment, run setup, find the program
        ENVIRONMENT(16),
        // coordinator -> agent: after a run, the named outputs of the run's directory, sent as OUTPUT_DATA then one REPLY
        OUTPUTS(17),
        // coordinator -> agent: before each attempt, the node's health (HealthRequest), answered by one REPLY
        HEALTH(18),
        // coordinator -> agent: sample the GPUs until the channel ends (GpuWatch), answered by one REPLY, then SAMPLE frames of gpus
        WATCH_GPUS(19),
        // agent -> coordinator
        HELLO(64), STARTED(65), STDOUT(66), STDERR(67), EXITED(68), PONG(69), NOTICE(70), DONE(71), REPLY(72), ERROR_FILE(73), STACK(74), OUTPUT_DATA(75),
        // agent -> coordinator: complete lines a worker appended to its RUNJOB_METRICS_FILE
        METRICS(76),
        // agent -> coordinator: one sample of one source (the node's GPUs, or a registered one), named, a JSON line
        SAMPLE(77);

        private static final Type[] BY_CODE = new Type[128];

        static {
            for (Type t : values()) {
                BY_CODE[t.code] = t;
            }
        }

        private final int code;

        Type(int code) {
            this.code = code;
        }

        /** The wire id. */
        public int code() {
            return code;
        }

        public Direction direction() {
            return code < 64 ? Direction.TO_AGENT : Direction.TO_COORDINATOR;
        }

        /** @throws ProtocolException for an id the catalogue does not have */
        public static Type of(int code) throws ProtocolException {
            Type t = code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
            if (t == null) {
                throw new ProtocolException("unknown frame type " + code);
            }
            return t;
        }
    }

    public Frame {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(payload, "payload");
    }

    public static Frame of(Type type) {
        return new Frame(type, -1, new byte[0]);
    }

    public void writeTo(DataOutputStream out) throws IOException {
        out.writeByte(type.code);
        out.writeInt(rank);
        out.writeInt(payload.length);
        out.write(payload);
    }

    /**
     * The next frame, or null at a clean end of stream (between frames).
     *
     * @throws ProtocolException for bytes that are no frame (an unknown type, a bad length, a stream that ends inside one)
     * @throws IOException       when reading fails
     */
    public static Frame readFrom(DataInputStream in) throws IOException {
        int type = in.read();
        if (type < 0) {
            return null;
        }
        Type t = Type.of(type);
        int rank;
        int length;
        try {
            rank = in.readInt();
            length = in.readInt();
        } catch (EOFException e) {
            throw new ProtocolException("the stream ended inside a " + t + " frame's header");
        }
        if (length < 0 || length > MAX_PAYLOAD) {
            throw new ProtocolException("bad length " + length + " in a " + t + " frame (at most " + MAX_PAYLOAD + ")");
        }
        byte[] payload = new byte[length];
        try {
            in.readFully(payload);
        } catch (EOFException e) {
            throw new ProtocolException("the stream ended inside a " + t + " frame's payload");
        }
        return new Frame(t, rank, payload);
    }
}
