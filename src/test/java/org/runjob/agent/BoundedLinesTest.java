package org.runjob.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

class BoundedLinesTest {

    private static List<String> read(InputStream in, int max) throws IOException {
        List<String> lines = new ArrayList<>();
        BoundedLines.read(in, max, lines::add);
        return lines;
    }

    private static List<String> read(String text, int max) throws IOException {
        return read(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)), max);
    }

    @Test
    void linesWithinTheBoundPassWholeWithoutTheirNewlineOrCarriageReturn() throws IOException {
        assertThat(read("a\nbb\r\n\nccc", 3)).containsExactly("a", "bb", "", "ccc");
    }

    @Test
    void aLongerLineIsCutToItsFirstBytesAndSaysHowManyWereDropped() throws IOException {
        assertThat(read("abcdefgh\nij\n", 3)).containsExactly("abc [line cut: 5 more bytes]", "ij");
    }

    @Test
    void aGigabyteWithoutANewlineIsReadInBoundedMemory() throws IOException {
        long size = 1L << 30;
        InputStream endless = new InputStream() {
            private long left = size;

            @Override
            public int read() {
                return left-- > 0 ? 'z' : -1;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (left <= 0) {
                    return -1;
                }
                int n = (int) Math.min(len, left);
                Arrays.fill(b, off, off + n, (byte) 'z');
                left -= n;
                return n;
            }
        };
        assertThat(read(endless, 10)).containsExactly("zzzzzzzzzz [line cut: " + (size - 10) + " more bytes]");
    }
}
