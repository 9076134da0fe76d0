package org.runjob.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** status names where the run works now: after a stand-in, the spare's workdir in the lost node's place. */
class StatusCommandTest {

    @TempDir
    Path tmp;

    @Test
    void afterAStandInTheSparesWorkdirIsNamedNotTheLostNodes() throws Exception {
        String id = "20261202-120000-abcd";
        Path folder = Files.createDirectories(tmp.resolve("runs/train/" + id));
        Files.writeString(folder.resolve("job.yaml"), "name: train\nnodes:\n  - {name: a, host: h1, workers: 1, workdir: /data/a}\n"
                + "  - {name: b, host: h2, workers: 1, workdir: /data/b}\nspares:\n  - {name: s, host: h3, workers: 1, workdir: /scratch/s}\n"
                + "entrypoint: {command: [python3, t.py]}\n");
        Files.writeString(folder.resolve("plan.json"), "{\"nodes\": [{\"name\": \"a\", \"workdir\": \"/data/a/runs/" + id + "\"},"
                + " {\"name\": \"b\", \"workdir\": \"/data/b/runs/" + id + "\"}]}");
        Files.writeString(folder.resolve("summary.json"), "{\"result\": \"succeeded\", \"exit_code\": 0}");
        Cli before = Cli.run(Map.of(), "status", id, "--logs-dir", tmp.resolve("runs").toString());
        assertThat(before.out()).contains("workdir /data/a/runs/" + id + " (on node a)\nworkdir /data/b/runs/" + id + " (on node b)\n");

        Files.writeString(folder.resolve("events.jsonl"), "{\"event\": \"stand_in\", \"spare\": \"s\", \"node\": \"b\", \"node_rank\": 1,"
                + " \"attempt\": 1}\n");
        Cli after = Cli.run(Map.of(), "status", id, "--logs-dir", tmp.resolve("runs").toString());
        assertThat(after.code()).as(after.err()).isZero();
        assertThat(after.out()).contains("workdir /data/a/runs/" + id + " (on node a)\nworkdir /scratch/s/runs/" + id + " (on node s)\n")
                .doesNotContain("/data/b");
    }
}
