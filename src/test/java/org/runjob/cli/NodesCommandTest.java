package org.runjob.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.run.QuarantineFile;
import org.runjob.spec.NodeAddress;
import org.runjob.spec.NodeSpec;

/** {@code runjob nodes} and a quarantined node in {@code runjob check}, reaching no machine. */
class NodesCommandTest {

    @TempDir
    Path tmp;

    private Map<String, String> env() {
        return Map.of("XDG_STATE_HOME", tmp.resolve("state").toString(), "HOME", tmp.toString(), "PATH", System.getenv("PATH"));
    }

    private void quarantine(String name, String host, String reason) {
        NodeSpec node = new NodeSpec(name, new NodeAddress.Ssh(host, OptionalInt.of(2222), Optional.empty()),
                new NodeSpec.GpuRequest.Listed(List.of()), OptionalInt.of(1), Optional.empty(), Map.of());
        new QuarantineFile(env(), Clock.fixed(Cli.NOW, ZoneOffset.UTC), "20261130-230000-cd34", "train", 3600, s -> {
        }).add(node, reason);
    }

    @Test
    void listsClearsAndSaysWhenNothingMatches() {
        Cli none = Cli.run(env(), "nodes");
        assertThat(List.of(none.code(), none.out(), none.err())).containsExactly(0, "no node is quarantined\n", "");
        quarantine("h1", "192.0.2.1", "lost: its agent answered no heartbeat for 4 s");
        quarantine("h2", "192.0.2.2", "health check failed: nvidia-smi: 1 uncorrectable ECC error on GPU 0");

        Cli list = Cli.run(env(), "nodes");
        assertThat(list.code()).as(list.err()).isZero();
        assertThat(list.out().lines().toList()).hasSize(4);
        assertThat(list.out()).containsPattern("(?m)^h1 +192\\.0\\.2\\.1:2222 +2026-12-01T08:00:00Z +20261130-230000-cd34 +lost: its agent"
                + " answered no heartbeat for 4 s$").containsPattern("(?m)^h2 +192\\.0\\.2\\.2:2222 +2026-12-01T08:00:00Z ")
                .endsWith("runjob nodes --clear NODE makes one usable again\n");
        Cli json = Cli.run(env(), "nodes", "-o", "json");
        assertThat(json.out()).contains("\"node\" : \"h1\"").contains("\"machine\" : \"192.0.2.2:2222\"").contains("\"job\" : \"train\"");

        Cli clear = Cli.run(env(), "nodes", "--clear", "h1");
        assertThat(List.of(clear.code(), clear.out())).containsExactly(0, "cleared node h1 (192.0.2.1:2222)\n");
        Cli again = Cli.run(env(), "nodes", "--clear", "h1");
        assertThat(again.code()).isEqualTo(2);
        assertThat(again.err()).isEqualTo("runjob: no quarantined node is named h1 (runjob nodes lists them)\n");
        Cli all = Cli.run(env(), "nodes", "--clear-all");
        assertThat(List.of(all.code(), all.out())).containsExactly(0, "cleared node h2 (192.0.2.2:2222)\n");
        assertThat(Cli.run(env(), "nodes").out()).isEqualTo("no node is quarantined\n");
    }

    @Test
    void aQuarantineOthersMayWriteIsRefused() throws Exception {
        quarantine("h1", "192.0.2.1", "lost");
        Path dir = QuarantineFile.dir(env());
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        Cli list = Cli.run(env(), "nodes");
        assertThat(list.code()).isEqualTo(3);
        assertThat(list.err()).startsWith("runjob: the quarantine in " + dir + " is not used: ");
        assertThat(list.out()).isEmpty();
    }

    @Test
    void aQuarantinedNodeWithoutASpareFailsCheckBeforeAnyMachineIsReached() throws Exception {
        quarantine("h2", "192.0.2.2", "lost: its agent answered no heartbeat for 4 s");
        Path job = Files.writeString(tmp.resolve("job.yaml"), String.join("\n", "name: train", "nodes:",
                "  - {name: h1, host: 192.0.2.1, port: 2222, workers: 1}", "  - {name: h2, host: 192.0.2.2, port: 2222, workers: 1}",
                "entrypoint: {command: [python3, train.py]}", "logs: {dir: " + tmp.resolve("runs") + "}", ""));
        Cli check = Cli.run(env(), "check", job.toString());
        assertThat(check.code()).as(check.out() + check.err()).isEqualTo(3);
        assertThat(check.err()).isEqualTo("runjob: node h2 is quarantined since 2026-12-01T07:00:00Z until 2026-12-01T08:00:00Z (192.0.2.2:2222; run"
                + " 20261130-230000-cd34 of job train): lost: its agent answered no heartbeat for 4 s; no spare fits its place."
                + " Use it again with: runjob nodes --clear h2\n");
        Cli run = Cli.run(env(), job.toString());
        assertThat(run.code()).isEqualTo(3);
        assertThat(run.err()).contains("runjob: node h2 is quarantined since 2026-12-01T07:00:00Z until 2026-12-01T08:00:00Z");
        assertThat(tmp.resolve("runs/train/" + Cli.RUN_ID + "/status.json")).exists();
    }
}
