package org.runjob.logs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** Console prefixes: coloured per node on a terminal, plain otherwise, filtered by --ranks. */
class ConsoleTest {

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void colourIsPerNodeAndCoversOnlyThePrefix() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Console c = new Console(out, true, Set.of());
        c.line("a", 0, b("[a/0] "), b("xhello"), 1, 5);
        c.line("b", 2, b("[b/2:err] "), b("bye"), 0, 3);
        c.line("a", 1, b("[a/1] "), b("again"), 0, 5);
        c.flush();
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo(
                "\u001b[36m[a/0] \u001b[0mhello\n\u001b[33m[b/2:err] \u001b[0mbye\n\u001b[36m[a/1] \u001b[0magain\n");
    }

    @Test
    void plainWhenNotATerminalAndOnlyTheRanksAskedFor() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Console c = new Console(out, false, Set.of(3));
        c.line("a", 0, b("[a/0] "), b("hidden"), 0, 6);
        c.line("b", 3, b("[b/3] "), b("shown"), 0, 5);
        c.flush();
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("[b/3] shown\n");
    }
}
