package org.runjob.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;

import org.junit.jupiter.api.Test;

/** A container's end as podman and docker print it with {@code inspect --format '{{.State.Status}} {{.State.ExitCode}} {{.State.FinishedAt}}'}. */
class ContainerEndTest {

    @Test
    void podmanPrintsGoTimeWithItsZone() {
        assertThat(ContainerStore.parseEnded("exited 7 2026-12-07 07:03:02.325523801 +0000 UTC"))
                .contains(new ContainerStore.Ended(7, Instant.parse("2026-12-07T07:03:02.325Z").toEpochMilli()));
        assertThat(ContainerStore.parseEnded("exited 143 2026-12-07 09:03:02.5 +0200 CEST"))
                .contains(new ContainerStore.Ended(143, Instant.parse("2026-12-07T07:03:02.500Z").toEpochMilli()));
    }

    @Test
    void dockerPrintsRfc3339() {
        assertThat(ContainerStore.parseEnded("exited 1 2026-12-07T07:03:02.325523801Z"))
                .contains(new ContainerStore.Ended(1, Instant.parse("2026-12-07T07:03:02.325Z").toEpochMilli()));
    }

    @Test
    void aContainerThatHasNotEndedHasNoEnd() {
        assertThat(ContainerStore.parseEnded("running 0 0001-01-01 00:00:00 +0000 UTC")).isEmpty();
        assertThat(ContainerStore.parseEnded("created 0 0001-01-01T00:00:00Z")).isEmpty();
        assertThat(ContainerStore.parseEnded("")).isEmpty();
    }
}
