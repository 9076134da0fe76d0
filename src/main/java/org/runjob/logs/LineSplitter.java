package org.runjob.logs;

import java.io.ByteArrayOutputStream;

/**
 * Cuts a byte stream into lines for prefixing. A line ends at '\n' (kept out of the line); a line
 * longer than {@code maxLine} bytes is emitted in pieces of {@code maxLine}, so memory stays bounded
 * whatever a worker prints. Bytes are passed through as they are: non-UTF-8 output is not altered.
 * Whole lines inside one chunk are handed out as slices of it, without copying.
 */
final class LineSplitter {

    /** Receives one line (without its '\n') as a slice; {@code ended} is false for a piece of a longer line or a last line without '\n'. */
    interface Sink {
        void line(byte[] buf, int off, int len, boolean ended);
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
            // look one byte past the room: a line of exactly maxLine bytes is not cut
            int searchEnd = Math.min(n, start + room + 1);
            int nl = -1;
            for (int i = start; i < searchEnd; i++) {
                if (bytes[i] == '\n') {
                    nl = i;
                    break;
                }
            }
            if (nl >= 0) {
                emit(bytes, start, nl - start, sink, true);
                start = nl + 1;
            } else if (searchEnd - start == room + 1) {
                emit(bytes, start, room, sink, false); // more than maxLine bytes without '\n': cut
                start += room;
            } else {
                partial.write(bytes, start, n - start);
                start = n;
            }
        }
    }

    private void emit(byte[] bytes, int off, int len, Sink sink, boolean ended) {
        if (partial.size() == 0) {
            sink.line(bytes, off, len, ended);
        } else {
            partial.write(bytes, off, len);
            byte[] line = partial.toByteArray();
            partial.reset();
            sink.line(line, 0, line.length, ended);
        }
    }

    /** Emits what is left (output that did not end in a newline). */
    void finish(Sink sink) {
        if (partial.size() > 0) {
            byte[] line = partial.toByteArray();
            partial.reset();
            sink.line(line, 0, line.length, false);
        }
    }
}
