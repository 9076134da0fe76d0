package org.runjob.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;

class HandshakeTest {

    static final String SHA = "a".repeat(64);

    @Test
    void anAgentOfThisProtocolAndJarIsAccepted() {
        assertThat(Handshake.mismatch(new NodeFacts(Map.of(NodeFacts.PROTOCOL, "5", NodeFacts.JAR, SHA)), SHA)).isEmpty();
    }

    @Test
    void anotherJarOrProtocolIsRefusedByName() {
        assertThat(Handshake.mismatch(new NodeFacts(Map.of(NodeFacts.PROTOCOL, "2", NodeFacts.JAR, "b".repeat(64))), SHA)).contains(
                "its agent speaks protocol 2 from jar bbbbbbbbbbbb, but this runjob speaks protocol 5 and sent jar aaaaaaaaaaaa:"
                        + " runjob and its agent are different builds");
        assertThat(Handshake.mismatch(new NodeFacts(Map.of(NodeFacts.PROTOCOL, "0", NodeFacts.JAR, SHA)), SHA)).get().asString()
                .startsWith("its agent speaks protocol 0 from jar aaaaaaaaaaaa, but this runjob speaks protocol 5");
        assertThat(Handshake.mismatch(new NodeFacts(Map.of()), SHA)).get().asString()
                .startsWith("its agent speaks protocol none from jar none");
    }
}
