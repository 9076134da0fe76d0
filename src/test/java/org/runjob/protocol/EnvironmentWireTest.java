package org.runjob.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

/** The ENVIRONMENT request and its reply round-trip every field. */
class EnvironmentWireTest {

    static final ContainerStart PODMAN = new ContainerStart("podman", "localhost/train:1", List.of("/data:/data:ro"), List.of());

    @Test
    void aRequestAndAReplyRoundTripEveryField() {
        EnvironmentRequest r = new EnvironmentRequest("python3", "venv", "envs/t1", List.of("cuda/12.1", "nccl"), List.of("env.sh", "/etc/x"),
                List.of("pip install --no-index ./pkg"), 600_000, "ab".repeat(32), EnvironmentRequest.Setup.FORCE, true,
                Map.of("A", "it's \"x\"", "EMPTY", ""), Optional.of(PODMAN));
        assertThat(EnvironmentRequest.decode(r.encode())).isEqualTo(r);
        EnvironmentRequest bare = new EnvironmentRequest("java", "", "", List.of(), List.of(), List.of(), 1000, "",
                EnvironmentRequest.Setup.CHECK, false, Map.of(), Optional.empty());
        assertThat(EnvironmentRequest.decode(bare.encode())).isEqualTo(bare);

        EnvironmentReply reply = new EnvironmentReply(Map.of(EnvironmentReply.TORCH, "2.1.0", EnvironmentReply.PROGRAM_PATH, "/a b/python3"),
                Map.of("PATH", "/v/bin:/usr/bin", "MULTI", "a\nb\u0000c"), List.of("PYTHONHOME"));
        assertThat(EnvironmentReply.decode(reply.encode())).isEqualTo(reply);
        byte[] longer = Arrays.copyOf(reply.encode(), reply.encode().length + 3);
        assertThatThrownBy(() -> EnvironmentReply.decode(longer)).hasMessage("bytes after the ENVIRONMENT reply: 3");
    }

    @Test
    void anotherFormatOrATruncatedPayloadIsRefused() {
        byte[] bytes = new EnvironmentRequest("python3", "", "", List.of(), List.of(), List.of(), 1, "", EnvironmentRequest.Setup.WHEN_DUE,
                true, Map.of("A", "B"), Optional.empty()).encode();
        byte[] other = bytes.clone();
        other[0] = 7;
        assertThatThrownBy(() -> EnvironmentRequest.decode(other)).hasMessage("ENVIRONMENT payload format 7, expected 1");
        assertThatThrownBy(() -> EnvironmentRequest.decode(Arrays.copyOf(bytes, bytes.length - 2))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EnvironmentReply.decode(new byte[] {0, 0, 0})).isInstanceOf(IllegalArgumentException.class);
    }
}
