package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.distribute.Sha256;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The quick-start job, jobs/local.yaml: two local nodes of two workers check in with rank 0. */
class LocalExampleTest {

    @TempDir
    Path tmp;

    @Test
    void theQuickStartJobRunsAndRecordsEverything() throws Exception {
        Path logs = tmp.resolve("runs");
        Cli r = Cli.run(System.getenv(), "--set", "logs.dir=" + logs, "--set", "workdir=" + tmp.resolve("work"), "jobs/local.yaml");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("[local1/0] all 4 ranks checked in\n", "[local1/0]    0     0         0  local1\n",
                "[local1/0]    1     1         0  local1\n", "[local1/0]    2     0         1  local2\n",
                "[local1/0]    3     1         1  local2\n", "[local2/3] rank 3 (local 1) on local2 checked in\n");
        assertThat(r.err()).contains("job local run " + Cli.RUN_ID + " succeeded");

        Path folder = logs.resolve("local").resolve(Cli.RUN_ID);
        try (var files = Files.list(folder)) {
            assertThat(files.map(p -> p.getFileName().toString()).sorted().toList()).containsExactly("all.log", "command.txt", "environment.json", "events.jsonl",
                    "job.yaml", "plan.json", "preflight.json", "rank-0.log", "rank-1.log", "rank-2.log", "rank-3.log", "runjob.log", "status.json",
                    "summary.json");
        }
        assertThat(Files.readAllLines(folder.resolve("events.jsonl"))).containsExactly(
                "{\"time\":\"2026-12-01T07:00:00Z\",\"event\":\"attempt_start\",\"attempt\":0,\"nodes\":[\"local1\",\"local2\"]}",
                "{\"time\":\"2026-12-01T07:00:00Z\",\"event\":\"attempt_end\",\"attempt\":0,\"result\":\"succeeded\",\"lost\":{}}");
        assertThat(Files.readString(folder.resolve("rank-2.log"))).isEqualTo("rank 2 (local 0) on local2 checked in\n");
        assertThat(Files.readString(folder.resolve("command.txt")))
                .isEqualTo("runjob --set logs.dir=" + logs + " --set workdir=" + tmp.resolve("work") + " jobs/local.yaml\n");
        assertThat(Files.readString(folder.resolve("job.yaml"))).contains("logs:\n  dir: " + logs + "\n")
                .contains("  - name: local2\n    local: true\n    workers: 2\n");
        JsonMapper json = JsonMapper.builder().build();
        JsonNode plan = json.readTree(Files.readString(folder.resolve("plan.json")));
        assertThat(plan.get("world_size").intValue()).isEqualTo(4);
        assertThat(plan.get("master_port").isInt()).as("auto port chosen before launch").isTrue();
        JsonNode summary = json.readTree(Files.readString(folder.resolve("summary.json")));
        assertThat(summary.get("result").stringValue()).isEqualTo("succeeded");
        assertThat(summary.get("command").toString()).startsWith("[\"runjob\",\"--set\"");
        List<String> states = summary.get("ranks").valueStream().map(n -> n.get("state").stringValue()).toList();
        assertThat(states).containsExactly("succeeded", "succeeded", "succeeded", "succeeded");
        assertThat(summary.get("ranks").get(2).get("stdout_bytes").intValue()).isEqualTo(38);
        // the job file lives in this repository: its commit is recorded
        assertThat(summary.get("git").get("commit").stringValue()).matches("[0-9a-f]{40}");
        // and the runjob that ran it: its version, commit and build time
        assertThat(summary.get("runjob").get("commit").stringValue()).matches("[0-9a-f]{7,}");
        assertThat(summary.get("git").get("commit").stringValue()).startsWith(summary.get("runjob").get("commit").stringValue());
        assertThat(summary.get("runjob").get("built").stringValue()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
        assertThat(Files.readString(folder.resolve("runjob.log"))).contains("rank 0 on local1 started, pid ");
        // the run works in a directory of its own; the file it received is kept once per content for later runs
        Path checkin = tmp.resolve("work/runs").resolve(Cli.RUN_ID).resolve("checkin.py");
        assertThat(checkin).exists();
        assertThat(Files.getAttribute(checkin, "unix:nlink")).isEqualTo(2);
        try (var stored = Files.list(tmp.resolve("work/.runjob/files"))) {
            assertThat(stored.map(p -> p.getFileName().toString()).toList())
                    .containsExactly(Sha256.of(Path.of("examples/checkin/checkin.py")) + "-"
                            + Integer.toOctalString((Integer) Files.getAttribute(Path.of("examples/checkin/checkin.py"), "unix:mode") & 0777) + "-"
                            + Files.getLastModifiedTime(Path.of("examples/checkin/checkin.py")).to(TimeUnit.SECONDS));
        }
        // the run folder's job.yaml runs as it ran, from anywhere: its files are absolute
        assertThat(Files.readString(folder.resolve("job.yaml"))).contains("files:\n  - " + Path.of("examples/checkin/checkin.py").toAbsolutePath());
        Cli again = Cli.run(System.getenv(), "--dry-run", folder.resolve("job.yaml").toString());
        assertThat(again.code()).as(again.err()).isZero();
        assertThat(again.out()).contains("  file                  checkin.py <- examples/checkin/checkin.py\n");
    }

    @Test
    void aRunWithJsonOutputPrintsItsSummaryAloneOnStdout() throws Exception {
        Path logs = tmp.resolve("runs");
        Cli r = Cli.run(System.getenv(), "-o", "json", "--set", "logs.dir=" + logs, "--set", "workdir=" + tmp.resolve("work"), "jobs/local.yaml");
        assertThat(r.code()).as(r.err()).isZero();
        // stdout is one JSON document (what jq reads); the workers' lines went to stderr
        JsonNode summary = JsonMapper.builder().build().readTree(r.out());
        assertThat(summary.get("result").stringValue()).isEqualTo("succeeded");
        assertThat(summary.get("exit_code").intValue()).isZero();
        assertThat(r.out()).startsWith("{").doesNotContain("[local");
        assertThat(r.err().lines().filter(l -> l.startsWith("[local")).count()).isEqualTo(9);
    }
}
