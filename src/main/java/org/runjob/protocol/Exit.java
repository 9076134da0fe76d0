package org.runjob.protocol;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * How a worker ended, as the agent saw it: exited with a code, killed by a signal, or never started.
 * {@code stoppedByAgent} says the agent had been told to stop it (so a signal is expected, not a failure).
 *
 * <p>Java reports a process killed by signal N as exit value 128+N; values above 128 are read as
 * signals, so a worker that itself exits with, say, 137 is reported as killed by SIGKILL.
 */
public sealed interface Exit {

    boolean stoppedByAgent();

    record Code(int code, boolean stoppedByAgent) implements Exit {
    }

    record Signal(int signal, boolean stoppedByAgent) implements Exit {
        public String name() {
            return SignalNames.of(signal);
        }
    }

    record NotStarted(String reason) implements Exit {
        @Override
        public boolean stoppedByAgent() {
            return false;
        }
    }

    static Exit fromExitValue(int value, boolean stopped) {
        if (value > 128 && value < 128 + 65) {
            return new Signal(value - 128, stopped);
        }
        return new Code(value, stopped);
    }

    /**
     * An exit as the agent reports it: how the worker ended and when its program did, in epoch
     * milliseconds by the node's clock (a container's program by its runtime's record), 0 when not
     * known. The program's end, not the report's arrival, orders failures: a runtime that takes
     * long to tear a container down does not make its worker's failure look later than its victims'.
     */
    record Report(Exit exit, long endedAtMillis) {

        /** Wire form: kind byte (0 code, 1 signal, 2 not started), stopped byte, int value, long end, reason bytes. */
        public byte[] encode() {
            byte[] reason = exit instanceof NotStarted n ? n.reason().getBytes(StandardCharsets.UTF_8) : new byte[0];
            ByteBuffer b = ByteBuffer.allocate(HEADER + reason.length);
            if (exit instanceof Code c) {
                b.put((byte) 0).put((byte) (c.stoppedByAgent() ? 1 : 0)).putInt(c.code());
            } else if (exit instanceof Signal s) {
                b.put((byte) 1).put((byte) (s.stoppedByAgent() ? 1 : 0)).putInt(s.signal());
            } else {
                b.put((byte) 2).put((byte) 0).putInt(0);
            }
            return b.putLong(endedAtMillis).put(reason).array();
        }

        public static Report decode(byte[] bytes) {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            int kind = b.get();
            boolean stopped = b.get() != 0;
            int value = b.getInt();
            long ended = b.getLong();
            Exit exit = switch (kind) {
                case 0 -> new Code(value, stopped);
                case 1 -> new Signal(value, stopped);
                default -> new NotStarted(Printable.text(new String(bytes, HEADER, bytes.length - HEADER, StandardCharsets.UTF_8)));
            };
            return new Report(exit, ended);
        }

        private static final int HEADER = 14;
    }
}
