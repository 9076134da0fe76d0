package org.runjob.agent;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.util.Objects;

/**
 * One message between coordinator and agent: {@code type (1 byte), rank (int32), length (int32),
 * payload (length bytes)}, big-endian. Worker output travels only inside a payload whose length is
 * fixed up front, so nothing a worker prints can end a frame early or forge another one.
 *
 * @param rank the worker the frame is about, or -1
 */
public record Frame(Type type, int rank, byte[] payload) {

    /** The largest payload accepted; output is sent in chunks well below it. */
    public static final int MAX_PAYLOAD = 16 * 1024 * 1024;

    /** Frame types; codes are the wire values. */
    public enum Type {
        // coordinator -> agent: supervision
        START(1), STOP(2), KILL(3), PING(4),
        // coordinator -> agent: preflight requests, each answered by one REPLY, one at a time
        FILES(5), FILE_DATA(6), LISTEN(7), CONNECT(8), UNLISTEN(9), PROBE_GPUS(20), LEASE(21),
        SERVE(22), FETCH(23), UNSERVE(24),
        // agent -> coordinator
        HELLO(10), STARTED(11), STDOUT(12), STDERR(13), EXITED(14), PONG(15), NOTICE(16), DONE(17), REPLY(18), ERROR_FILE(19);

        final int code;

        Type(int code) {
            this.code = code;
        }

        static Type of(int code) throws IOException {
            for (Type t : values()) {
                if (t.code == code) {
                    return t;
                }
            }
            throw new IOException("unknown frame type " + code);
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

    /** The next frame, or null at a clean end of stream (between frames). */
    public static Frame readFrom(DataInputStream in) throws IOException {
        int type = in.read();
        if (type < 0) {
            return null;
        }
        int rank = in.readInt();
        int length = in.readInt();
        if (length < 0 || length > MAX_PAYLOAD) {
            throw new IOException("bad frame length " + length);
        }
        byte[] payload = new byte[length];
        try {
            in.readFully(payload);
        } catch (EOFException e) {
            throw new IOException("stream ended inside a frame", e);
        }
        return new Frame(Type.of(type), rank, payload);
    }
}
