package org.runjob.protocol;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.Optional;

/**
 * The REPLY to a request of the rendezvous probe (LISTEN, CONNECT, UNLISTEN) or the relay (SERVE,
 * FETCH, UNSERVE): done, with the request's number (the port bound or served, the bytes fetched;
 * 0 where it has none) and the network interface it used ({@code -} where none), or failed, with
 * the agent's reason. The coordinator decodes it as the answer to the request it sent: no text
 * is split or matched.
 */
public record Answer(Optional<String> failure, long number, String iface) {

    private static final byte FORMAT = 1;

    public Answer {
        failure.ifPresent(f -> {
            if (f.isEmpty()) {
                throw new IllegalArgumentException("a failure says why");
            }
        });
    }

    public static Answer done() {
        return done(0, "-");
    }

    public static Answer done(long number, String iface) {
        return new Answer(Optional.empty(), number, iface);
    }

    public static Answer failed(String why) {
        return new Answer(Optional.of(why.isEmpty() ? "no reason given" : why), 0, "-");
    }

    public boolean ok() {
        return failure.isEmpty();
    }

    public byte[] encode() {
        return Wire.bytes(out -> {
            out.writeByte(FORMAT);
            out.writeBoolean(failure.isPresent());
            Wire.string(out, failure.orElse(""));
            out.writeLong(number);
            Wire.string(out, iface);
        });
    }

    /** @throws IllegalArgumentException for bytes that are not an answer of this format */
    public static Answer decode(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            byte format = in.readByte();
            if (format != FORMAT) {
                throw new IllegalArgumentException("answer format " + format + ", expected " + FORMAT);
            }
            boolean failed = in.readBoolean();
            String why = Printable.text(Wire.string(in));
            long number = in.readLong();
            String iface = Printable.line(Wire.string(in));
            if (in.available() > 0) {
                throw new IllegalArgumentException("an answer with " + in.available() + " bytes too many");
            }
            return failed ? new Answer(Optional.of(why), number, iface) : new Answer(Optional.empty(), number, iface);
        } catch (IOException e) {
            throw new IllegalArgumentException("a truncated answer", e);
        }
    }
}
