package org.runjob.observe.testonly;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.json.Json;
import org.runjob.observe.Sources;
import org.runjob.testbed.HomeEnv;
import org.runjob.testbed.LocalJobs;

import tools.jackson.databind.JsonNode;

/**
 * An observation source that lives only in the test sources ({@link WorkerCountSource}, one
 * service line) goes through every stage: the job file names it, each node's agent samples it,
 * its samples reach the run folder's {@code metrics/} and {@code runjob top -o json}.
 */
class WorkerCountSourceTest {

    @TempDir
    Path tmp;

    private Path job(String observe) throws Exception {
        return LocalJobs.twoNodes(tmp, "watched", "observe: " + observe + "\n", "sleep 1.5; echo rank $RANK");
    }

    private Map<String, String> env() throws Exception {
        return HomeEnv.in(tmp);
    }

    @Test
    void theRegistryFindsItByItsServiceLine() {
        assertThat(Sources.names()).containsExactly("testonly_workers");
        assertThat(Sources.find("testonly_workers")).get().isInstanceOf(WorkerCountSource.class);
        assertThat(Sources.find(Sources.GPUS)).isEmpty();
    }

    @Test
    void itsSamplesFromEveryNodeReachTheRunFolderAndTop() throws Exception {
        Path prometheus = tmp.resolve("runjob.prom");
        var run = Cli.run(env(), job("{interval_s: 0.25, sources: [testonly_workers], prometheus: " + prometheus + "}").toString());
        assertThat(run.code()).as(run.err()).isZero();
        Path metrics = tmp.resolve("runs/watched").resolve(Cli.RUN_ID).resolve("metrics");
        for (String node : List.of("a", "b")) {
            List<String> lines = Files.readAllLines(metrics.resolve("source-testonly_workers-" + node + ".jsonl"));
            assertThat(lines).as("samples of node " + node).hasSizeGreaterThanOrEqualTo(2);
            for (int i = 0; i < lines.size(); i++) {
                JsonNode sample = Json.MAPPER.readTree(lines.get(i));
                assertThat(sample.propertyNames()).containsExactly("time", "node", "attempt", "workers", "ranks", "sample");
                assertThat(sample.path("node").asString()).isEqualTo(node);
                assertThat(sample.path("attempt").asInt()).isZero();
                assertThat(sample.path("workers").asInt()).isEqualTo(node.equals("a") ? 2 : 1);
                assertThat(sample.path("ranks").toString()).isEqualTo(node.equals("a") ? "[0,1]" : "[2]");
                assertThat(sample.path("sample").asInt()).isEqualTo(i + 1);
            }
        }
        // summary.json keeps each node's last sample
        JsonNode summary = Json.read(metrics.getParent().resolve("summary.json")).path("metrics").path("sources").path("testonly_workers");
        assertThat(summary.propertyNames()).containsExactly("a", "b");
        assertThat(summary.path("a").path("workers").asInt()).isEqualTo(2);
        // the last sample of each node, as gauges: its numeric fields
        List<String> gauges = Files.readAllLines(prometheus).stream().filter(l -> l.startsWith("runjob_source{")).toList();
        String labels = "runjob_source{job=\"watched\",run=\"" + Cli.RUN_ID + "\",source=\"testonly_workers\"";
        assertThat(gauges).hasSize(4).contains(labels + ",node=\"a\",name=\"workers\"} 2", labels + ",node=\"b\",name=\"workers\"} 1");
        var top = Cli.run(env(), "top", "-o", "json", "last", "--logs-dir", tmp.resolve("runs").toString());
        assertThat(top.code()).as(top.err()).isZero();
        JsonNode sources = Json.MAPPER.readTree(top.out()).path("sources");
        assertThat(sources.propertyNames()).containsExactly("testonly_workers");
        assertThat(sources.path("testonly_workers").propertyNames()).containsExactly("a", "b");
        assertThat(sources.path("testonly_workers").path("b").path("ranks").toString()).isEqualTo("[2]");
        assertThat(sources.path("testonly_workers").path("a").path("sample").asInt())
                .isEqualTo(Files.readAllLines(metrics.resolve("source-testonly_workers-a.jsonl")).size());
    }

    @Test
    void aSourceTheJobNamesMustBeRegistered() throws Exception {
        var unknown = Cli.run(env(), "validate", job("{sources: [nosuch, gpus]}").toString());
        assertThat(unknown.code()).isEqualTo(2);
        assertThat(unknown.err()).contains("/observe/sources/0: unknown observation source 'nosuch': registered are testonly_workers\n")
                .contains("/observe/sources/1: unknown observation source 'gpus': the GPUs are sampled whenever observe.interval_s is above 0\n");
    }
}
