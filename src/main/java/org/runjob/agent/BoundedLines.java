package org.runjob.agent;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * Reads a stream line by line holding at most {@code max} bytes of a line: a longer line is given
 * as its first {@code max} bytes followed by {@value #CUT} and the count of the bytes dropped,
 * once it ends. Memory stays bounded whatever the stream holds (a gigabyte without a newline).
 */
final class BoundedLines {

    static final String CUT = " [line cut: ";

    private BoundedLines() {
    }

    /** Gives each line of {@code in} (without its newline) to {@code line} until the stream ends. */
    static void read(InputStream in, int max, Consumer<String> line) throws IOException {
        ByteArrayOutputStream current = new ByteArrayOutputStream(Math.min(max, 8192));
        long dropped = 0;
        byte[] buf = new byte[8192];
        int n;
        while ((n = in.read(buf)) > 0) {
            int start = 0;
            for (int i = 0; i < n; i++) {
                if (buf[i] == '\n') {
                    dropped += take(current, buf, start, i - start, max);
                    line.accept(text(current, dropped));
                    current.reset();
                    dropped = 0;
                    start = i + 1;
                }
            }
            dropped += take(current, buf, start, n - start, max);
        }
        if (current.size() > 0 || dropped > 0) {
            line.accept(text(current, dropped));
        }
    }

    /** Appends what fits of {@code len} bytes; returns how many did not. */
    private static long take(ByteArrayOutputStream to, byte[] b, int off, int len, int max) {
        int room = Math.max(0, max - to.size());
        int kept = Math.min(room, len);
        to.write(b, off, kept);
        return len - kept;
    }

    private static String text(ByteArrayOutputStream line, long dropped) {
        String s = line.toString(StandardCharsets.UTF_8);
        if (s.endsWith("\r")) {
            s = s.substring(0, s.length() - 1);
        }
        return dropped == 0 ? s : s + CUT + dropped + " more bytes]";
    }
}
