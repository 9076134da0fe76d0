package org.runjob.logs;

import java.io.ByteArrayOutputStream;
import java.util.function.BiConsumer;

/**
 * Cuts a byte stream into lines for prefixing. A line ends at '\n' (kept out of the line); a line
 * longer than {@code maxLine} bytes is emitted in pieces of {@code maxLine}, each marked as not
 * ending the line, so memory stays bounded whatever a worker prints. Bytes are passed through as
 * they are: non-UTF-8 output is not altered.
 */
final class LineSplitter {

    private final int maxLine;
    private final ByteArrayOutputStream partial = new ByteArrayOutputStream();

    LineSplitter(int maxLine) {
        this.maxLine = maxLine;
    }

    /** Feeds bytes; {@code sink} gets (line bytes, whether the line really ended here). */
    void feed(byte[] bytes, BiConsumer<byte[], Boolean> sink) {
        int start = 0;
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == '\n') {
                partial.write(bytes, start, i - start);
                sink.accept(partial.toByteArray(), true);
                partial.reset();
                start = i + 1;
            } else if (partial.size() + (i - start + 1) >= maxLine) {
                partial.write(bytes, start, i - start + 1);
                sink.accept(partial.toByteArray(), false);
                partial.reset();
                start = i + 1;
            }
        }
        partial.write(bytes, start, bytes.length - start);
    }

    /** Emits what is left (output that did not end in a newline). */
    void finish(BiConsumer<byte[], Boolean> sink) {
        if (partial.size() > 0) {
            sink.accept(partial.toByteArray(), false);
            partial.reset();
        }
    }
}
