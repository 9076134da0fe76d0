package org.runjob.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.Chromium;
import org.runjob.testbed.FakeCuda;
import org.runjob.testbed.Leftovers;
import org.runjob.testbed.OnSshTestbed;
import org.runjob.testbed.Poll;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What runjob sees inside a running job, on real sshd hosts: each agent's GPU samples through the
 * stand-in NVML (h1 two V100s, h2 an A30, h3 none), and the metrics workers write to
 * RUNJOB_METRICS_FILE, gathered in the run folder's {@code metrics/}.
 */
@OnSshTestbed
class ObserveTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path tmp;

    ClusterJobs jobs;
    @RegisterExtension
    final Leftovers toClean = new Leftovers();

    @BeforeEach
    void setUp() throws Exception {
        FakeCuda.library();
        jobs = new ClusterJobs(tmp);
    }

    private Path folderOf(String job) throws Exception {
        try (var runs = Files.list(jobs.logs.resolve(job))) {
            return runs.filter(Files::isDirectory).findFirst().orElseThrow();
        }
    }

    /** The lines of a metrics file with their time field dropped (its value is checked to be a time). */
    private static List<String> untimed(Path file) throws Exception {
        return Files.readAllLines(file).stream().map(l -> {
            JsonNode o = JSON.readTree(l);
            assertThat(Instant.parse(o.path("time").asString())).isAfter(Instant.parse("2026-01-01T00:00:00Z"));
            return l.replaceFirst("^\\{\"time\":\"[^\"]+\",", "{");
        }).toList();
    }

    @Test
    void gpuSamplesAndMetricsArriveFromEveryNode() throws Exception {
        // h1's first GPU answers garbage, h2's has no power sensor, h3 has no GPU (nor NVML's devices)
        Files.writeString(jobs.bed.nvmlFile(1), "garbage\n37 1024 71500 45 1410\n");
        Files.writeString(jobs.bed.nvmlFile(2), "88 20000 NA 61 1305\n");
        Path job = jobs.job("observed", jobs.gpuNode(jobs.bed.host(1)) + jobs.gpuNode(jobs.bed.host(2)) + jobs.node(jobs.bed.host(3), 1),
                jobs.worker("metrics.py"), List.of("python3", "metrics.py"), "observe: {interval_s: 0.3}\n",
                Map.of("STEPS", "6", "STEP_S", "0.3", "GARBAGE", "1"));
        Cli r = jobs.run(job);
        assertThat(r.code()).as(r.err()).isZero();
        Path metrics = folderOf("observed").resolve("metrics");
        try (var files = Files.list(metrics)) {
            assertThat(files.map(p -> p.getFileName().toString()).sorted().toList())
                    .containsExactly("gpu-h1.jsonl", "gpu-h2.jsonl", "rank-0.jsonl", "rank-1.jsonl", "rank-2.jsonl", "rank-3.jsonl");
        }
        // a sample every 0.3 s from each node with GPUs for the run's ~2 s, each GPU with the rank that uses it (LOCAL_RANK-th)
        String h1 = "{\"node\":\"h1\",\"attempt\":0,\"gpus\":[{\"index\":0,\"utilization_pct\":null,\"memory_used_mib\":null,"
                + "\"memory_total_mib\":null,\"power_w\":null,\"temperature_c\":null,\"sm_clock_mhz\":null,\"ranks\":[0]},{\"index\":1,"
                + "\"utilization_pct\":37,\"memory_used_mib\":1024,\"memory_total_mib\":16384,\"power_w\":71.5,\"temperature_c\":45,"
                + "\"sm_clock_mhz\":1410,\"ranks\":[1]}]}";
        String h2 = "{\"node\":\"h2\",\"attempt\":0,\"gpus\":[{\"index\":0,\"utilization_pct\":88,\"memory_used_mib\":20000,"
                + "\"memory_total_mib\":24576,\"power_w\":null,\"temperature_c\":61,\"sm_clock_mhz\":1305,\"ranks\":[2]}]}";
        assertThat(untimed(metrics.resolve("gpu-h1.jsonl"))).hasSizeGreaterThanOrEqualTo(4).containsOnly(h1);
        assertThat(untimed(metrics.resolve("gpu-h2.jsonl"))).hasSizeGreaterThanOrEqualTo(4).containsOnly(h2);
        for (int rank = 0; rank < 4; rank++) {
            List<String> expected = new ArrayList<>();
            for (int step = 0; step < 6; step++) {
                expected.add("{\"rank\":" + rank + ",\"attempt\":0,\"step\":" + step + ",\"loss\":" + new double[] {1.0, 0.5, 0.3333, 0.25, 0.2, 0.1667}[step] + "}");
            }
            assertThat(untimed(metrics.resolve("rank-" + rank + ".jsonl"))).as("rank " + rank).isEqualTo(expected);
            assertThat(r.err()).contains("runjob: note: rank " + rank + " wrote 1 line to RUNJOB_METRICS_FILE that is not one JSON object: skipped"
                    + " (the first: loss=0.5 (not json)); write each line as json.dumps({...}) + \"\\n\"\n");
        }
        JsonNode summary = JSON.readTree(Files.readString(folderOf("observed").resolve("summary.json"))).path("metrics");
        assertThat(summary.path("no_gpu_samples").toString()).isEqualTo("{\"h3\":\"NVML did not start (nvmlInit_v2 returned 9)\"}");
        assertThat(summary.path("ranks").path("3").path("lines").asInt()).isEqualTo(6);
        assertThat(summary.path("ranks").path("3").path("malformed").asInt()).isEqualTo(1);
        assertThat(summary.path("stragglers").size()).isZero();
        // sampling off: no GPU files
        Cli off = jobs.run(job, "--set", "observe.interval_s=0");
        assertThat(off.code()).as(off.err()).isZero();
    }

    /** Four ranks, one 200 ms slower per step: named once, within the windows; four with jitter: never. */
    @Test
    void aSlowRankIsNamedAStragglerAndUniformRanksAreNot() throws Exception {
        String nodes = jobs.node(jobs.bed.host(1), 2) + jobs.node(jobs.bed.host(2), 2);
        Path slow = jobs.job("slow", nodes, jobs.worker("metrics.py"), List.of("python3", "metrics.py"),
                "observe: {interval_s: 0, straggler_window_s: 1}\n", Map.of("STEPS", "30", "STEP_S", "0.2", "SLOW_RANK", "2", "SLOW_S", "0.2"));
        Cli r = jobs.run(slow);
        assertThat(r.code()).as(r.err()).isZero();
        List<String> named = r.err().lines().filter(l -> l.contains("straggler")).toList();
        assertThat(named).hasSize(1);
        // step times come within the agents' 50 ms read of the workers' own: 0.2 s steps read 0.19-0.21 s
        assertThat(named.get(0)).matches("runjob: rank 2 on h2 is a straggler: its step time 0\\.(3[6-9]|4\\d) s is \\d+ % above the other ranks'"
                + " median 0\\.(1[89]|2\\d) s \\(3 windows of 1\\.00 s in a row\\)");
        JsonNode episodes = JSON.readTree(Files.readString(folderOf("slow").resolve("summary.json"))).path("metrics").path("stragglers");
        assertThat(episodes.size()).isEqualTo(1);
        assertThat(episodes.get(0).path("rank").asInt()).isEqualTo(2);
        assertThat(episodes.get(0).path("node").asString()).isEqualTo("h2");
        // named within 4 windows of its first steps, and till its worker ended
        Instant from = Instant.parse(episodes.get(0).path("from").asString());
        Instant firstStep = Instant.parse(JSON.readTree(Files.readAllLines(folderOf("slow").resolve("metrics/rank-2.jsonl")).get(0)).path("time").asString());
        assertThat(Duration.between(firstStep, from)).isLessThan(Duration.ofSeconds(5));
        assertThat(episodes.get(0).path("to").isString()).isTrue();

        Path uniform = jobs.job("uniform", nodes, jobs.worker("metrics.py"), List.of("python3", "metrics.py"),
                "observe: {interval_s: 0, straggler_window_s: 1}\n", Map.of("STEPS", "60", "STEP_S", "0.2", "JITTER_S", "0.05"));
        Cli u = jobs.run(uniform);
        assertThat(u.code()).as(u.err()).isZero();
        assertThat(u.err()).doesNotContain("straggler");
        assertThat(JSON.readTree(Files.readString(folderOf("uniform").resolve("summary.json"))).path("metrics").path("stragglers").size()).isZero();
    }

    /** runjob top of a detached run: each rank's GPU and values exactly, its steps; the table ends with the run; the run's output untouched. */
    @Test
    void topShowsEachRanksGpuAndStepsAndEndsWithTheRun() throws Exception {
        Files.writeString(jobs.bed.nvmlFile(1), "10 100 50000 40 1000\n37 1024 71500 45 1410\n");
        Files.writeString(jobs.bed.nvmlFile(2), "88 20000 NA 61 1305\n");
        Path job = jobs.job("topped", jobs.gpuNode(jobs.bed.host(1)) + jobs.gpuNode(jobs.bed.host(2)), jobs.worker("metrics.py"),
                List.of("python3", "metrics.py"), "observe: {interval_s: 0.5}\n", Map.of("STEPS", "40", "STEP_S", "0.25"));
        Cli detach = jobs.run(job, "--detach");
        assertThat(detach.code()).as(detach.err()).isZero();
        String id = detach.out().strip();
        String logs = jobs.logs.toString();
        JsonNode[] snapshot = new JsonNode[1];
        Poll.until(() -> {
            Cli top = Cli.run(System.getenv(), "top", id, "--logs-dir", logs, "-o", "json");
            snapshot[0] = JSON.readTree(top.out());
            return snapshot[0].path("ranks").size() == 3 && snapshot[0].path("ranks").valueStream()
                    .allMatch(k -> k.path("step").asDouble(-1) >= 3 && k.path("gpus").size() == 1);
        }, Duration.ofSeconds(30), "top to show 3 ranks with steps and GPUs", () -> String.valueOf(snapshot[0]));
        JsonNode ranks = snapshot[0].path("ranks");
        assertThat(snapshot[0].path("run_id").asString()).isEqualTo(id);
        assertThat(ranks.get(0).path("gpus").toString()).isEqualTo("[{\"index\":0,\"utilization_pct\":10.0,\"memory_used_mib\":100.0,"
                + "\"memory_total_mib\":16384.0,\"power_w\":50.0}]");
        assertThat(ranks.get(1).path("gpus").toString()).isEqualTo("[{\"index\":1,\"utilization_pct\":37.0,\"memory_used_mib\":1024.0,"
                + "\"memory_total_mib\":16384.0,\"power_w\":71.5}]");
        assertThat(ranks.get(2).path("gpus").toString()).isEqualTo("[{\"index\":0,\"utilization_pct\":88.0,\"memory_used_mib\":20000.0,"
                + "\"memory_total_mib\":24576.0,\"power_w\":null}]");
        for (JsonNode k : ranks) {
            assertThat(List.of(k.path("node").asString(), k.path("state").asString())).isIn(List.of("h1", "running"), List.of("h2", "running"));
            assertThat(k.path("step_time_s").asDouble()).as("rank %s step time", k.path("rank")).isBetween(0.2, 0.4);
            assertThat(k.path("rate").isNumber()).as("rate is a number").isTrue();
            assertThat(k.path("rate_unit").asString()).isEqualTo("step/s");
            assertThat(k.path("step").isIntegralNumber()).as("step counts whole steps").isTrue();
            assertThat(k.path("straggler").isNull()).isTrue();
        }
        // the table, redrawn every second until the run ends
        Cli table = Cli.run(System.getenv(), "top", id, "--logs-dir", logs, "--interval", "1");
        assertThat(table.code()).as(table.err()).isZero();
        List<String> last = List.of(table.out().substring(table.out().lastIndexOf("run " + id)).split("\n"));
        assertThat(last.get(0)).isEqualTo("run " + id + " of job topped: succeeded, attempt 0");
        assertThat(last.get(1)).matches(" rank +node +gpu +util +memory +power +step +step time +rate +output +state");
        assertThat(last.get(2)).matches(" +0 +h1 +0 +10% +0\\.1/16\\.0 GiB +50 W +39 +0\\.\\d{3} s +\\d\\.\\d\\d step/s +\\d+ s ago +succeeded");
        assertThat(last.get(4)).matches(" +2 +h2 +0 +88% +19\\.5/24\\.0 GiB +n/a +39 .* succeeded");
        // status shows the last sample and step per rank too
        Cli status = Cli.run(System.getenv(), "status", id, "--logs-dir", logs);
        assertThat(status.out()).contains("inside the run (its last GPU samples and metrics; runjob top " + id + " follows them live):\n")
                .containsPattern("\n +2 +h2 +0 +88% +19\\.5/24\\.0 GiB +n/a +39 ")
                // and a sparkline of rank 0's loss, falling from 1/17 to 1/40 over its last 24 steps
                .containsPattern("\nrank 0 loss \u2588[\u2581-\u2588]{22}\u2581 0\\.025 \\(its last 24\\)\n");
        // top added nothing to the run's own output
        Path folder = jobs.logs.resolve("topped").resolve(id);
        assertThat(Files.readAllLines(folder.resolve("all.log")).stream().sorted().toList())
                .containsExactly("[h1/0] rank 0 wrote 40 steps", "[h1/1] rank 1 wrote 40 steps", "[h2/2] rank 2 wrote 40 steps");
    }

    /** plot of a run with a restart: the page opens in headless Chromium with no console error, a line per rank and attempt, the restart marked. */
    @Test
    void plotOfARunWithARestartRendersALinePerRankAndTheRestartMarker() throws Exception {
        Files.writeString(jobs.bed.nvmlFile(1), "10 100 50000 40 1000\n37 1024 71500 45 1410\n");
        Files.writeString(jobs.bed.nvmlFile(2), "88 20000 NA 61 1305\n");
        Path job = jobs.job("plotted", jobs.gpuNode(jobs.bed.host(1)) + jobs.gpuNode(jobs.bed.host(2)), jobs.worker("metrics.py"),
                List.of("python3", "metrics.py"), "observe: {interval_s: 0.3}\nfailure: {max_restarts: 1, grace_period_s: 1}\n",
                Map.of("STEPS", "10", "STEP_S", "0.2", "FAIL_RANK", "1", "FAIL_AT", "4"));
        Cli r = jobs.run(job);
        assertThat(r.code()).as(r.err()).isZero();
        String id = folderOf("plotted").getFileName().toString();
        String logs = jobs.logs.toString();
        Cli none = Cli.run(System.getenv(), "plot", id, "--logs-dir", logs, "--metric", "accuracy");
        assertThat(none.code()).isEqualTo(2);
        assertThat(none.err()).isEqualTo("runjob: run " + id + " has no metric accuracy; it has loss\n");
        Cli plot = Cli.run(System.getenv(), "plot", id, "--logs-dir", logs);
        assertThat(plot.code()).as(plot.err()).isZero();
        Path page = Path.of(plot.out().strip());
        assertThat(page).isEqualTo(folderOf("plotted").resolve("plot.html").toAbsolutePath());
        String html = Files.readString(page);
        // nothing it could fetch: the SVG namespace is a name, not an address
        assertThat(html.replace("\"http://www.w3.org/2000/svg\"", "")).doesNotContain("http://", "https://", " src=", " href=");
        Chromium.Page rendered = Chromium.render(page, Files.createDirectories(tmp.resolve("chromium")));
        assertThat(rendered.console()).as("console messages").isEmpty();
        assertThat(rendered.dom()).contains("data-charts=\"2\"");
        String loss = section(rendered.dom(), "loss");
        String gpu = section(rendered.dom(), "GPU utilization");
        for (String chart : List.of(loss, gpu)) {
            List<String> ranks = new ArrayList<>();
            Matcher m = Pattern.compile("<path d=\"([^\"]+)\" class=\"line\" data-rank=\"(\\d+)\"").matcher(chart);
            while (m.find()) {
                ranks.add(m.group(2) + ":" + m.group(1).chars().filter(c -> c == 'M').count());
            }
            // a line per rank, in two strokes: attempt 0 and attempt 1
            assertThat(ranks).containsExactly("0:2", "1:2", "2:2");
            assertThat(chart).containsOnlyOnce("class=\"restart\" data-attempt=\"1\"").contains(">restart 1</text>");
        }
        Path docs = Path.of("docs", "img");
        if (Files.isDirectory(docs) && System.getenv("RUNJOB_DOC_PICTURES") != null) {
            Chromium.screenshot(page, docs.resolve("plot.png").toAbsolutePath(), 1000, 700, tmp.resolve("chromium"));
        }
    }

    /** The rendered chart section of {@code metric}. */
    private static String section(String dom, String metric) {
        int start = dom.indexOf("<section class=\"chart\" data-metric=\"" + metric + "\">");
        assertThat(start).as("a chart of " + metric).isNotNegative();
        return dom.substring(start, dom.indexOf("</section>", start));
    }
}
