package org.runjob.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;

import org.junit.jupiter.api.Test;

/** A node host's record types keep their bytes: 1 to 10, in the order the protocol page lists them. */
class HostRecordsTest {

    @Test
    void eachTypeHasItsByteAndOnlyThoseBytesAreTypes() {
        assertThat(Arrays.stream(HostRecords.Type.values()).map(t -> t.name() + "=" + t.code)).containsExactly("EXEC=1", "STOP=2",
                "STARTED=3", "FAILED=4", "STDIN=5", "STDIN_EOF=6", "KILL=7", "STDOUT=8", "STDERR=9", "EXIT=10", "HOLD=11");
        for (HostRecords.Type t : HostRecords.Type.values()) {
            assertThat(HostRecords.Type.of(t.code)).contains(t);
            assertThat(new SecureLink.Record(t.code, new byte[0]).is(t)).isTrue();
        }
        assertThat(HostRecords.Type.of((byte) 0)).isEmpty();
        assertThat(HostRecords.Type.of((byte) 12)).isEmpty();
    }
}
