package org.runjob.node;

import java.io.InputStream;
import java.io.OutputStream;

/**
 * A program started on a node with piped stdin and stdout: an SSH exec channel, a local child
 * process, a Slurm step. Closing its stdin is how it is asked to end; {@link #close} ends it now.
 */
public interface NodeProcess extends AutoCloseable {

    InputStream stdout();

    OutputStream stdin();

    /** Ends the program (the channel, the process, the step) without waiting for it. */
    @Override
    void close();

    /** A program whose stdout and stdin are these streams, ended by {@code end}. */
    static NodeProcess of(InputStream stdout, OutputStream stdin, Runnable end) {
        return new NodeProcess() {
            @Override
            public InputStream stdout() {
                return stdout;
            }

            @Override
            public OutputStream stdin() {
                return stdin;
            }

            @Override
            public void close() {
                end.run();
            }
        };
    }
}
