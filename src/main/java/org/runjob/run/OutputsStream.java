package org.runjob.run;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import org.runjob.protocol.Frame;
import org.runjob.protocol.OutputSender;
import org.runjob.protocol.Outputs;
import org.runjob.session.OutputReceiver;

/**
 * A run folder's {@code outputs/} as one byte stream, for {@code runjob pull} of a submitted run:
 * the master node's runjob sends it on stdout, the launcher receives it into a folder of its own.
 * The stream is the line {@value #HEADER}, then the agent's OUTPUTS answer as frames (OUTPUT_DATA
 * chunks, one REPLY with the {@link Outputs.Manifest}); each file is checked by size and SHA-256
 * as it lands ({@link OutputReceiver}). Bytes before the header (a login shell's chatter) are skipped.
 */
public final class OutputsStream {

    static final String HEADER = "runjob outputs 2";
    /** How much may come before the header. */
    private static final int BEFORE_HEADER = 1 << 16;

    private OutputsStream() {
    }

    /** Sends {@code paths} (relative to {@code outputs}, a run folder's outputs/) to {@code out}. */
    public static Outputs.Manifest send(Path outputs, List<String> paths, OutputStream out) throws IOException {
        DataOutputStream data = new DataOutputStream(out);
        data.write((HEADER + "\n").getBytes(StandardCharsets.US_ASCII));
        IOException[] failed = new IOException[1];
        Outputs.Manifest m = OutputSender.send(paths, outputs, f -> {
            try {
                if (failed[0] == null) {
                    f.writeTo(data);
                }
            } catch (IOException e) {
                failed[0] = e;
            }
        });
        if (failed[0] != null) {
            throw failed[0];
        }
        new Frame(Frame.Type.REPLY, -1, m.encode()).writeTo(data);
        data.flush();
        return m;
    }

    /**
     * Receives a stream {@link #send} wrote into {@code into}.
     *
     * @throws IOException when the stream is not one, ends early, or a file is not what its manifest says
     */
    public static Outputs.Manifest receive(InputStream in, Path into) throws IOException {
        DataInputStream data = new DataInputStream(new BufferedInputStream(in));
        skipToHeader(data);
        try (OutputReceiver receiver = new OutputReceiver(into)) {
            while (true) {
                Frame f = Frame.readFrom(data);
                if (f == null) {
                    throw new IOException("the stream of outputs ended before its manifest");
                }
                if (f.type() == Frame.Type.OUTPUT_DATA) {
                    receiver.chunk(f.rank(), f.payload());
                } else if (f.type() == Frame.Type.REPLY) {
                    Outputs.Manifest m;
                    try {
                        m = Outputs.Manifest.decode(f.payload());
                    } catch (IllegalArgumentException e) {
                        throw new IOException("the stream of outputs ended with something that is no manifest");
                    }
                    return receiver.finish(m, "the master node");
                } else {
                    throw new IOException("a " + f.type() + " frame in a stream of outputs");
                }
            }
        }
    }

    private static void skipToHeader(DataInputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        for (int read = 0; read < BEFORE_HEADER; read++) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("the master node sent no outputs");
            }
            if (b == '\n') {
                if (line.toString().equals(HEADER)) {
                    return;
                }
                line.setLength(0);
            } else if (line.length() <= HEADER.length()) {
                line.append((char) b);
            }
        }
        throw new IOException("the master node sent " + BEFORE_HEADER + " bytes that are no outputs");
    }
}
