package org.runjob.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** STARTED's payload: 8 bytes of pid, then the token; a payload without a pid is refused by name. */
class StartedTest {

    @Test
    void itRoundTripsAndIsEightBytesPlusTheToken() throws ProtocolException {
        Started s = new Started(4_194_301L, "rj-7f3a");
        byte[] wire = s.encode();
        assertThat(wire).hasSize(8 + 7);
        assertThat(Started.decode(wire)).isEqualTo(s);
        assertThat(Started.decode(new Started(1, "").encode())).isEqualTo(new Started(1, ""));
    }

    @Test
    void aShortPayloadIsAProtocolError() {
        assertThatThrownBy(() -> Started.decode(new byte[5])).isInstanceOf(ProtocolException.class)
                .hasMessage("a STARTED payload of 5 bytes holds no pid");
    }
}
