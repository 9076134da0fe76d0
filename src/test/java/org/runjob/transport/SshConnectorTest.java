package org.runjob.transport;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SshConnectorTest {

    @Test
    void curve25519ComesFirstAndNoKeyExchangeIsOfferedTwice() {
        assertThat(SshConnector.curve25519First("ecdh-sha2-nistp256,curve25519-sha256,diffie-hellman-group14-sha256"))
                .isEqualTo("curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,diffie-hellman-group14-sha256");
    }
}
