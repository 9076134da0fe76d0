package org.runjob.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.runjob.protocol.ContainerStart;
import org.runjob.protocol.Frame;
import org.runjob.protocol.StartRequest;
import org.runjob.protocol.WorkerStart;

class StartRequestTest {

    @Test
    void roundTripsEveryFieldByteForByte() {
        WorkerStart a = new WorkerStart(0, List.of("python3", "-c", "print('训练')", "", "a\nb\u0000c"),
                Map.of("RANK", "0", "EMPTY", "", "QUOTE", "it's \"x\" $(y)"), "/tmp/w d");
        WorkerStart b = new WorkerStart(7, List.of("x"), Map.of(), "~/runs");
        StartRequest r = new StartRequest(List.of(a, b), 10_000, 15_000);
        assertThat(StartRequest.decode(r.encode())).isEqualTo(r);
        StartRequest contained = new StartRequest(List.of(a, b), 1, 2, List.of("PYTHONHOME", "X"),
                Optional.of(new ContainerStart("podman", "localhost/t:1", List.of("/data:/data:ro"), List.of("--shm-size", "8g"))));
        assertThat(StartRequest.decode(contained.encode())).isEqualTo(contained);
        StartRequest sampled = new StartRequest(List.of(a), 1, 2, List.of(), Optional.empty(), 250, List.of("dcgm", "power_meter"));
        assertThat(StartRequest.decode(sampled.encode())).isEqualTo(sampled);
        assertThat(StartRequest.decode(sampled.encode()).sources()).containsExactly("dcgm", "power_meter");
    }

    @Test
    void aLargeSharedValueTravelsOnceForTwoHundredWorkers() {
        String big = "v".repeat(1 << 20);
        List<WorkerStart> workers = new ArrayList<>();
        for (int r = 0; r < 200; r++) {
            workers.add(new WorkerStart(r, List.of("python3", "t.py"), Map.of("BIG", big, "RANK", Integer.toString(r)), "/w"));
        }
        StartRequest request = new StartRequest(workers, 1, 2);
        byte[] bytes = request.encode();
        assertThat(bytes.length).isLessThan((1 << 20) + 200 * 64).isLessThan(Frame.MAX_PAYLOAD);
        assertThat(StartRequest.decode(bytes)).isEqualTo(request);
    }

    @Test
    void refusesAnotherFormatAndATruncatedPayload() {
        byte[] bytes = new StartRequest(List.of(new WorkerStart(1, List.of("x"), Map.of("A", "B"), "/w")), 1, 2).encode();
        byte[] other = bytes.clone();
        other[0] = 9;
        assertThatThrownBy(() -> StartRequest.decode(other)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("START payload format 9, expected 5");
        assertThatThrownBy(() -> StartRequest.decode(Arrays.copyOf(bytes, bytes.length - 1)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
