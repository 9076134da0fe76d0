package org.runjob.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** POSIX quoting, proven by a real /bin/sh reading the quoted text back. */
class ShellWordsTest {

    static final List<String> NASTY = List.of("plain", "with space", "it's", "\"double\"", "$(touch /tmp/pwned)",
            "`id`", "$HOME", "a\nb", "tab\there", "naïve ünïcödé 训练", "", "*", "~", "-n", "a;b|c&d", "\\back\\slash", "'",
            "''", "x=y", "#hash", "!bang", "{a,b}", "[ab]");

    @Test
    void safeWordsStayBareAndOthersAreSingleQuoted() {
        assertThat(ShellWords.quote("train.py")).isEqualTo("train.py");
        assertThat(ShellWords.quote("--lr=0.1")).isEqualTo("--lr=0.1");
        assertThat(ShellWords.quote("with space")).isEqualTo("'with space'");
        assertThat(ShellWords.quote("it's")).isEqualTo("'it'\\''s'");
        assertThat(ShellWords.quote("")).isEqualTo("''");
        assertThat(ShellWords.quote("~/x")).isEqualTo("'~/x'");
    }

    @Test
    void aFirstWordWithEqualsIsQuotedSoItIsNotAnAssignment() {
        assertThat(ShellWords.join(List.of("A=b", "A=b"))).isEqualTo("'A=b' A=b");
    }

    @Test
    void shReadsBackExactlyTheOriginalBytes() throws Exception {
        List<String> argv = new ArrayList<>(List.of("printf", "%s\\0"));
        argv.addAll(NASTY);
        String script = ShellWords.join(argv);
        Process p = new ProcessBuilder("/bin/sh", "-c", script).redirectErrorStream(true).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream in = p.getInputStream()) {
            in.transferTo(out);
        }
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
        String expected = String.join("\0", NASTY) + "\0";
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo(expected);
    }
}
