package org.runjob.logs;

import java.io.ByteArrayOutputStream;

/**
 * Cuts a byte stream into lines for prefixing. A line ends at '\n' (kept out of the line); a line
 * longer than {@code maxLine} bytes is emitted in pieces of {@code maxLine}, so memory stays bounded
 * whatever a worker prints. Bytes are passed through as they are: non-UTF-8 output is not altered.
 * Whole lines inside one chunk are handed out as slices of it, without copying.
 */
final class LineSplitter {

    /** Receives one line (without its '\n') as a slice. */
    interface Sink {
        void line(byte[] buf, int off, int len);
    }

    private final int maxLine;
    private final ByteArrayOutputStream partial = new ByteArrayOutputStream();

    LineSplitter(int maxLine) {
        this.maxLine = maxLine;
    }

    void feed(byte[] bytes, Sink sink) {
        int start = 0;
        int n = bytes.length;
        while (start < n) {
            int room = maxLine - partial.size();
            int limit = Math.min(n, start + room);
            int nl = -1;
            for (int i = start; i < limit; i++) {
                if (bytes[i] == '\n') {
                    nl = i;
                    break;
                }
            }
            if (nl >= 0) {
                emit(bytes, start, nl - start, sink);
                start = nl + 1;
            } else if (limit - start == room) {
                emit(bytes, start, room, sink); // a line of maxLine bytes: cut here
                start = limit;
            } else {
                partial.write(bytes, start, n - start);
                start = n;
            }
        }
    }

    private void emit(byte[] bytes, int off, int len, Sink sink) {
        if (partial.size() == 0) {
            sink.line(bytes, off, len);
        } else {
            partial.write(bytes, off, len);
            byte[] line = partial.toByteArray();
            partial.reset();
            sink.line(line, 0, line.length);
        }
    }

    /** Emits what is left (output that did not end in a newline). */
    void finish(Sink sink) {
        if (partial.size() > 0) {
            byte[] line = partial.toByteArray();
            partial.reset();
            sink.line(line, 0, line.length);
        }
    }
}
