package org.runjob.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PrintableTest {

    @Test
    void everyControlAndBidiOverrideIsEscapedAndPlainTextIsUntouched() {
        assertThat(Printable.line("torch 2.1.0+cu121 ünï")).isEqualTo("torch 2.1.0+cu121 ünï");
        assertThat(Printable.line("a\u001b]0;t\u0007b\u009b2Jc\u202ed\u007fe")).isEqualTo("a\\x1b]0;t\\x07b\\u009b2Jc\\u202ed\\x7fe");
        assertThat(Printable.line("one\ntwo\r\tthree")).isEqualTo("one\\x0atwo\\x0d three");
        assertThat(Printable.text("one\ntwo\r\tthree")).isEqualTo("one\ntwo\\x0d\tthree");
    }
}
