package org.runjob.node;

import java.io.InputStream;
import java.io.OutputStream;

/**
 * A program started on a node with piped stdin and stdout: an SSH exec channel, a local child
 * process, a Slurm step. Closing its stdin is how it is asked to end; {@link #close} lets go of
 * it (the channel, the pipes, the step); {@link #kill} ends it by force where it can.
 */
public interface NodeProcess extends AutoCloseable {

    InputStream stdout();

    OutputStream stdin();

    /** Lets go of the program (the channel, the pipes, the step) without waiting for it. */
    @Override
    void close();

    /** Ends the program now, and what it started where that can be reached from here; by default as {@link #close}. */
    default void kill() {
        close();
    }

    /** A program whose stdout and stdin are these streams, let go of by {@code end}. */
    static NodeProcess of(InputStream stdout, OutputStream stdin, Runnable end) {
        return of(stdout, stdin, end, end);
    }

    /** The same, killed by {@code kill}. */
    static NodeProcess of(InputStream stdout, OutputStream stdin, Runnable end, Runnable kill) {
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

            @Override
            public void kill() {
                kill.run();
            }
        };
    }
}
