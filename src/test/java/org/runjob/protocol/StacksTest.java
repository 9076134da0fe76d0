package org.runjob.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

class StacksTest {

    @Test
    void requestsAndAnswersRoundTripWithTheirExactBytes() {
        assertThat(new String(new Stacks.Request("request-1", true).encode(), StandardCharsets.UTF_8)).isEqualTo("request-1 native");
        assertThat(new String(new Stacks.Request("attempt-0-hang", false).encode(), StandardCharsets.UTF_8)).isEqualTo("attempt-0-hang");
        assertThat(Stacks.Request.decode("request-1 native".getBytes(StandardCharsets.UTF_8))).isEqualTo(new Stacks.Request("request-1", true));
        assertThat(Stacks.Request.decode("attempt-0-hang".getBytes(StandardCharsets.UTF_8))).isEqualTo(new Stacks.Request("attempt-0-hang", false));
        Stacks.Answer a = new Stacks.Answer("request-1", "process 12 (python3), main thread 0x01\n  File \"t.py\", line 3 in f\n");
        assertThat(new String(a.encode(), StandardCharsets.UTF_8)).startsWith("request-1\nprocess 12 ");
        assertThat(Stacks.Answer.decode(a.encode())).isEqualTo(a);
        assertThat(Stacks.Answer.decode("only-id".getBytes(StandardCharsets.UTF_8))).isEqualTo(new Stacks.Answer("only-id", ""));
    }
}
