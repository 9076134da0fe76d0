package org.runjob.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.json.Json;
import org.runjob.spec.NodeAddress;
import org.runjob.spec.NodeSpec;

import tools.jackson.databind.JsonNode;

/** The per-user quarantine: what one entry holds, where, with which modes, and what is not read. */
class QuarantineFileTest {

    private static final Instant NOW = Instant.parse("2026-12-01T07:00:00Z");

    @TempDir
    Path tmp;

    private Map<String, String> env() {
        return Map.of("XDG_STATE_HOME", tmp.resolve("state").toString(), "HOME", tmp.toString());
    }

    private static NodeSpec ssh(String name, String host, Integer port) {
        return new NodeSpec(name, new NodeAddress.Ssh(host, port == null ? OptionalInt.empty() : OptionalInt.of(port), Optional.of("alice")),
                new NodeSpec.GpuRequest.Listed(List.of()), OptionalInt.of(1), Optional.empty(), Map.of());
    }

    private QuarantineFile file(int seconds, List<String> said) {
        return new QuarantineFile(env(), Clock.fixed(NOW, ZoneOffset.UTC), "20261201-070000-ab12", "train", seconds, said::add);
    }

    @Test
    void anEntryIsOneFilePerMachineInAPrivateDirectoryAndEndsAtItsCooldown() throws IOException {
        List<String> said = new ArrayList<>();
        assertThat(file(3600, said).add(ssh("h1", "10.0.0.1", 2222), "lost: its agent answered no heartbeat for 4 s")).isTrue();
        Path dir = tmp.resolve("state/runjob/quarantine");
        assertThat(QuarantineFile.dir(env())).isEqualTo(dir);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).isEqualTo("rwx------");
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()).toList()).containsExactly("10.0.0.1%3A2222.json");
        }
        JsonNode o = Json.read(dir.resolve("10.0.0.1%3A2222.json"));
        assertThat(o.path("machine").asString()).isEqualTo("10.0.0.1:2222");
        assertThat(o.path("node").asString()).isEqualTo("h1");
        assertThat(o.path("reason").asString()).isEqualTo("lost: its agent answered no heartbeat for 4 s");
        assertThat(o.path("since").asString()).isEqualTo("2026-12-01T07:00:00Z");
        assertThat(o.path("until").asString()).isEqualTo("2026-12-01T08:00:00Z");
        assertThat(o.path("run_id").asString()).isEqualTo("20261201-070000-ab12");
        assertThat(o.path("job").asString()).isEqualTo("train");
        assertThat(said).containsExactly("node h1 (10.0.0.1:2222) is quarantined until 2026-12-01T08:00:00Z (failure.quarantine_s 3600):"
                + " lost: its agent answered no heartbeat for 4 s");

        assertThat(QuarantineFile.active(env(), NOW.plusSeconds(3599))).hasSize(1);
        assertThat(QuarantineFile.active(env(), NOW.plusSeconds(3600))).isEmpty();
        // the machine, not the name, is what is avoided: port 22 when the job file gives none
        List<QuarantineFile.Entry> active = QuarantineFile.active(env(), NOW);
        assertThat(QuarantineFile.of(active, ssh("renamed", "10.0.0.1", 2222))).isPresent();
        assertThat(QuarantineFile.of(active, ssh("h1", "10.0.0.1", null))).isEmpty();
        assertThat(QuarantineFile.of(active, new NodeSpec("h1", new NodeAddress.Local(Optional.empty()),
                new NodeSpec.GpuRequest.Listed(List.of()), OptionalInt.of(1), Optional.empty(), Map.of()))).isEmpty();
    }

    @Test
    void thisMachineAndAJobWithNoCooldownQuarantineNothing() {
        List<String> said = new ArrayList<>();
        NodeSpec local = new NodeSpec("here", new NodeAddress.Local(Optional.empty()), new NodeSpec.GpuRequest.Listed(List.of()),
                OptionalInt.of(1), Optional.empty(), Map.of());
        assertThat(file(3600, said).add(local, "lost")).isFalse();
        assertThat(file(0, said).add(ssh("h1", "10.0.0.1", 22), "lost")).isFalse();
        assertThat(said).isEmpty();
        assertThat(tmp.resolve("state")).doesNotExist();
    }

    @Test
    void clearingByNameOrMachineRemovesOnlyThatEntry() throws IOException {
        QuarantineFile q = file(60, new ArrayList<>());
        q.add(ssh("h1", "10.0.0.1", 22), "lost");
        q.add(ssh("h2", "10.0.0.2", 22), "health check failed");
        assertThat(QuarantineFile.clear(env(), "10.0.0.2:22")).extracting(QuarantineFile.Entry::node).containsExactly("h2");
        assertThat(QuarantineFile.clear(env(), "h2")).isEmpty();
        assertThat(QuarantineFile.active(env(), NOW)).extracting(QuarantineFile.Entry::node).containsExactly("h1");
        assertThat(QuarantineFile.clear(env(), null)).extracting(QuarantineFile.Entry::node).containsExactly("h1");
        assertThat(QuarantineFile.active(env(), NOW)).isEmpty();
    }

    @Test
    void aLinkedOrDamagedEntryIsNotReadAndADirectoryOthersMayWriteIsNotUsed() throws IOException {
        List<String> said = new ArrayList<>();
        QuarantineFile q = file(60, said);
        q.add(ssh("h1", "10.0.0.1", 22), "lost");
        Path dir = QuarantineFile.dir(env());
        Path elsewhere = Files.writeString(tmp.resolve("planted.json"), Files.readString(dir.resolve("10.0.0.1%3A22.json")).replace("h1", "h9"));
        Files.createSymbolicLink(dir.resolve("10.0.0.9%3A22.json"), elsewhere);
        Files.writeString(dir.resolve("10.0.0.8%3A22.json"), "{\"machine\": \"10.0.0.8:22\", \"until\": \"tomorrow\"}");
        assertThat(QuarantineFile.active(env(), NOW)).extracting(QuarantineFile.Entry::node).containsExactly("h1");

        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        assertThat(QuarantineFile.problem(env())).isPresent();
        assertThat(QuarantineFile.active(env(), NOW)).isEmpty();
        said.clear();
        assertThat(q.add(ssh("h2", "10.0.0.2", 22), "lost")).isFalse();
        assertThat(said).hasSize(1);
        assertThat(said.get(0)).startsWith("cannot quarantine node h2 in " + dir + ": ");
        assertThat(dir.resolve("10.0.0.2%3A22.json")).doesNotExist();
    }

    @Test
    void aReasonHoldingTerminalEscapesIsShownEscapedWhenRead() throws IOException {
        QuarantineFile q = file(60, new ArrayList<>());
        q.add(ssh("h1", "10.0.0.1", 22), "failed its health check: \u001b]52;c;cHduZWQ=\u0007\u001b[2J");
        assertThat(QuarantineFile.active(env(), NOW)).extracting(QuarantineFile.Entry::reason)
                .containsExactly("failed its health check: \\x1b]52;c;cHduZWQ=\\x07\\x1b[2J");
    }

    @Test
    void timesAreKeptAndShownToTheSecond() throws IOException {
        List<String> said = new ArrayList<>();
        QuarantineFile q = new QuarantineFile(env(), Clock.fixed(NOW.plusNanos(123_456_789), ZoneOffset.UTC), "20261201-070000-ab12", "train",
                3600, said::add);
        q.add(ssh("h1", "10.0.0.1", 22), "lost");
        assertThat(said).containsExactly("node h1 (10.0.0.1:22) is quarantined until 2026-12-01T08:00:00Z (failure.quarantine_s 3600): lost");
        QuarantineFile.Entry e = QuarantineFile.active(env(), NOW).get(0);
        assertThat(e.since()).isEqualTo(NOW);
        assertThat(e.until()).isEqualTo(NOW.plusSeconds(3600));
    }
}
