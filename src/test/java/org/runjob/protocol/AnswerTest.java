package org.runjob.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.Optional;

import org.junit.jupiter.api.Test;

class AnswerTest {

    @Test
    void answersAndRequestsComeBackAsTheyWent() {
        for (Answer a : new Answer[] {Answer.done(), Answer.done(29500, "eth0"), Answer.done(3L << 32, "-"),
                Answer.failed("port 29500 cannot be bound: Address already in use"), Answer.failed("")}) {
            assertThat(Answer.decode(a.encode())).isEqualTo(a);
        }
        assertThat(Answer.failed("").failure()).contains("no reason given");
        assertThat(Answer.done(7, "ib0").failure()).isEqualTo(Optional.empty());
        for (PortRequest r : new PortRequest[] {PortRequest.listen("10.0.0.1", 0), PortRequest.connect("node-1 a", 65535, 5000),
                PortRequest.fetch("10.0.0.2", 40123, "ab".repeat(32)), PortRequest.serve("cd".repeat(32))}) {
            assertThat(PortRequest.decode(r.encode())).isEqualTo(r);
        }
    }

    @Test
    void bytesThatAreNoAnswerAreRefused() {
        byte[] good = Answer.done(1, "eth0").encode();
        assertThatThrownBy(() -> Answer.decode(Arrays.copyOf(good, good.length - 1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a truncated answer");
        assertThatThrownBy(() -> Answer.decode(Arrays.copyOf(good, good.length + 1))).hasMessage("an answer with 1 bytes too many");
        assertThatThrownBy(() -> Answer.decode("ok 12".getBytes())).hasMessageStartingWith("answer format 111");
        byte[] port = PortRequest.listen("a", 1).encode();
        port[port.length - 12] = (byte) 0xff; // the port's high byte: a negative port
        assertThatThrownBy(() -> PortRequest.decode(port)).hasMessageContaining("out of range");
        assertThatThrownBy(() -> PortRequest.decode(new byte[] {1, 0, 0, 0, 9})).hasMessage("a truncated request");
    }
}
