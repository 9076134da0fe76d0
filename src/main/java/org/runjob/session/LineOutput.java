package org.runjob.session;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * A node program's stderr as lines: each line (UTF-8, without its '\n'; at most 8 KiB of it kept)
 * goes to a consumer as it ends. For the small text a remote program writes on stderr, not for
 * worker output (which {@code logs} cuts into lines without decoding). Closing it (the copy of
 * the program's stderr reached its end) passes on a last unended line.
 */
public final class LineOutput extends OutputStream {

    private static final int MAX_LINE = 8192;

    private final Consumer<String> lines;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream();
    private volatile boolean closed;

    public LineOutput(Consumer<String> lines) {
        this.lines = lines;
    }

    @Override
    public synchronized void write(int b) {
        if (b == '\n') {
            String text = line.toString(StandardCharsets.UTF_8);
            line.reset();
            lines.accept(text);
        } else if (line.size() < MAX_LINE) {
            line.write(b);
        }
    }

    @Override
    public synchronized void close() {
        if (line.size() > 0) {
            write('\n');
        }
        closed = true;
    }

    /** True once the stream was closed: every line it will have was passed on. */
    public boolean closed() {
        return closed;
    }
}
