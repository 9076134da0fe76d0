package org.runjob.logs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

class LineSplitterTest {

    private final List<String> lines = new ArrayList<>();
    private final LineSplitter.Sink sink = (buf, off, len, ended) ->
            lines.add(new String(buf, off, len, StandardCharsets.ISO_8859_1) + (ended ? "|" : "~"));

    @Test
    void linesAcrossChunksLongLinesAndALastLineWithoutNewline() {
        LineSplitter s = new LineSplitter(4);
        s.feed("ab\ncd".getBytes(StandardCharsets.ISO_8859_1), sink);
        s.feed("e\n\nfghijk\nxy".getBytes(StandardCharsets.ISO_8859_1), sink);
        assertThat(lines).containsExactly("ab|", "cde|", "|", "fghi~", "jk|");
        s.finish(sink);
        assertThat(lines).endsWith("xy~");
        s.finish(sink);
        assertThat(lines).hasSize(6);
    }

    @Test
    void aLineOfExactlyTheLimitIsNotCut() {
        LineSplitter s = new LineSplitter(3);
        s.feed("abc".getBytes(StandardCharsets.ISO_8859_1), sink);
        s.feed("\nabcd\n".getBytes(StandardCharsets.ISO_8859_1), sink);
        assertThat(lines).containsExactly("abc|", "abc~", "d|");
    }
}
