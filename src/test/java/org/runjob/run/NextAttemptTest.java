package org.runjob.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The next attempt of a run folder only grows, and nothing of an earlier attempt is overwritten. */
class NextAttemptTest {

    @TempDir
    Path folder;

    /**
     * A requeued run ran attempt 1; its next start was cancelled in preflight, which rewrote
     * status.json with that start's attempt before it began. The next start is attempt 2, not 1
     * again, and the summaries kept so far stay as they are.
     */
    @Test
    void aStartThatEndedInPreflightDoesNotMakeAnAttemptNumberComeAgain() throws Exception {
        Files.writeString(folder.resolve("status.json"), "{\"state\": \"preflight\", \"attempt\": 0}");
        Files.writeString(folder.resolve("events.jsonl"), """
                {"time":"2026-12-07T05:00:00Z","event":"attempt_start","attempt":0,"nodes":["h1","h2"]}
                {"time":"2026-12-07T05:01:00Z","event":"attempt_end","attempt":0,"result":"failed"}
                {"time":"2026-12-07T05:02:00Z","event":"attempt_start","attempt":1,"nodes":["h1","h2"]}
                {"time":"2026-12-07T05:03:00Z","event":"attempt_end","attempt":1,"result":"interrupted"}
                """);
        Files.writeString(folder.resolve("summary.until-attempt-0.json"), "{\"kept\": 0}");
        Files.writeString(folder.resolve("summary.json"), "{\"kept\": 1}");
        assertThat(RunStatus.nextAttempt(folder)).hasValue(2);
        assertThat(Files.readString(folder.resolve("summary.until-attempt-0.json"))).isEqualTo("{\"kept\": 0}");
        assertThat(Files.readString(folder.resolve("summary.until-attempt-1.json"))).isEqualTo("{\"kept\": 1}");
        assertThat(folder.resolve("summary.json")).doesNotExist();
        // a summary whose kept name is taken already goes beside it, never over it
        Files.writeString(folder.resolve("summary.json"), "{\"kept\": \"again\"}");
        assertThat(RunStatus.nextAttempt(folder)).hasValue(2);
        assertThat(Files.readString(folder.resolve("summary.until-attempt-1.json"))).isEqualTo("{\"kept\": 1}");
        assertThat(Files.readString(folder.resolve("summary.until-attempt-1.1.json"))).isEqualTo("{\"kept\": \"again\"}");
    }

    @Test
    void aFolderWithoutStatusHasNoAttemptAndAnUnreadableOneGoesOnFromItsOtherRecords() throws Exception {
        assertThat(RunStatus.nextAttempt(folder)).isEmpty();
        Files.writeString(folder.resolve("status.json"), "{cut");
        assertThat(RunStatus.nextAttempt(folder)).hasValue(1);
        Files.writeString(folder.resolve("events.jsonl"), "{\"event\":\"attempt_start\",\"attempt\":4}\n{\"event\":\"attempt_st");
        assertThat(RunStatus.nextAttempt(folder)).hasValue(5);
    }
}
