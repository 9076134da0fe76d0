package org.runjob.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

class LeaseTest {

    @Test
    void requestsAndAnswersComeBackAsTheyWentHeldGpusInTheirOrder() {
        List<Lease.Slot> slots = List.of(new Lease.Slot(3, "0000:04:00"), new Lease.Slot(0, "0000:01:00"));
        for (Lease.Request r : List.of(Lease.Request.pick(1, "train job", "20261204-130000-ab12", slots),
                Lease.Request.hold("j", "r", slots), Lease.Request.query(slots))) {
            assertThat(Lease.Request.decode(r.encode())).isEqualTo(r);
        }
        Map<Integer, String> held = new LinkedHashMap<>();
        held.put(5, "run r1 of job j (user ann, since 2026-12-01T09:30:02Z)");
        held.put(2, "another runjob run");
        Lease.Answer a = new Lease.Answer(List.of(0, 3), held, List.of(7), Optional.empty());
        Lease.Answer back = Lease.Answer.decode(a.encode());
        assertThat(back).isEqualTo(a);
        assertThat(back.held().keySet()).containsExactly(5, 2);
        Lease.Answer failed = Lease.Answer.failed("the GPU lease directory /x is not a directory");
        assertThat(Lease.Answer.decode(failed.encode()).error()).contains("the GPU lease directory /x is not a directory");
    }

    @Test
    void anotherFormatAnUnknownKindAndExtraOrMissingBytesAreRefused() {
        byte[] bytes = Lease.Request.query(List.of(new Lease.Slot(0, "0000:01:00"))).encode();
        byte[] other = bytes.clone();
        other[0] = 2;
        assertThatThrownBy(() -> Lease.Request.decode(other)).hasMessage("LEASE request format 2, expected 1");
        byte[] kind = bytes.clone();
        kind[1] = 9;
        assertThatThrownBy(() -> Lease.Request.decode(kind)).hasMessage("LEASE request of kind 9");
        assertThatThrownBy(() -> Lease.Request.decode(Arrays.copyOf(bytes, bytes.length - 1))).hasMessage("a truncated LEASE request");
        assertThatThrownBy(() -> Lease.Request.decode(Arrays.copyOf(bytes, bytes.length + 1)))
                .hasMessage("a LEASE request with 1 bytes too many");
        assertThatThrownBy(() -> Lease.Answer.decode(new byte[0])).hasMessage("a truncated LEASE answer");
    }
}
