package org.runjob.runs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.json.Json;

/**
 * top, status and plot from one fixture run folder, their exact text: two ranks on two nodes,
 * a restart, GPU samples, step marks, a straggler, a silent rank.
 */
class ViewsTest {

    static final String ID = "20261201-100000-abcd";
    static final Instant NOW = Instant.parse("2026-12-01T10:01:00Z");

    @TempDir
    Path tmp;

    Path folder;

    @BeforeEach
    void fixture() throws Exception {
        folder = Files.createDirectories(tmp.resolve("runs/train/" + ID));
        Files.createDirectories(folder.resolve("metrics"));
        // a live runjob: this JVM stands in for it (its pid and start time)
        long pid = ProcessHandle.current().pid();
        String ticks = Files.readString(Path.of("/proc/self/stat")).replaceAll("^.*\\) ", "").split(" ")[19];
        Files.writeString(folder.resolve("status.json"), "{\"run_id\": \"" + ID + "\", \"job\": \"train\", \"state\": \"running\","
                + " \"attempt\": 1, \"coordinator\": {\"pid\": " + pid + ", \"start_ticks\": " + ticks + ", \"host\": \""
                + Files.readString(Path.of("/proc/sys/kernel/hostname")).strip() + "\"},"
                + " \"started\": \"2026-12-01T10:00:00Z\", \"ranks\": ["
                + "{\"rank\": 0, \"node\": \"a\", \"state\": \"running\", \"pid\": 101, \"last_output\": \"2026-12-01T10:00:58Z\"},"
                + "{\"rank\": 1, \"node\": \"b\", \"state\": \"running\", \"pid\": 202, \"last_output\": \"2026-12-01T10:00:20Z\"}]}");
        Files.writeString(folder.resolve("plan.json"), "{\"max_steps\": 100, \"nodes\": [{\"name\": \"a\"}, {\"name\": \"b\"}]}");
        Files.writeString(folder.resolve("rank-0.attempt-1.log"), "step 30 loss 0.5\n\n");
        Files.writeString(folder.resolve("rank-1.attempt-1.log"), "step 10 \u001b[31mloss\u001b[0m 0.9\n");
        StringBuilder r0 = new StringBuilder();
        StringBuilder r1 = new StringBuilder();
        for (int s = 0; s < 3; s++) {
            r0.append(line(0, 0, s, 10 + s, 2.0 - s * 0.1));
        }
        for (int s = 2; s <= 26; s += 4) {
            r0.append(line(0, 1, s, 30 + s, 1.0 / (s + 1)));
            r1.append(line(1, 1, s / 2, 30 + s, 1.0 / (s + 1)));
        }
        Files.writeString(folder.resolve("metrics/rank-0.jsonl"), r0);
        Files.writeString(folder.resolve("metrics/rank-1.jsonl"), r1);
        Files.writeString(folder.resolve("metrics/gpu-a.jsonl"), "{\"time\": \"2026-12-01T10:00:59Z\", \"attempt\": 1, \"gpus\": [{\"index\": 0,"
                + " \"utilization_pct\": 97, \"memory_used_mib\": 30720, \"memory_total_mib\": 40960, \"power_w\": 250.5, \"ranks\": [0]}]}\n");
        Files.writeString(folder.resolve("metrics/gpu-b.jsonl"), "{\"time\": \"2026-12-01T10:00:59Z\", \"attempt\": 1, \"gpus\": [{\"index\": 1,"
                + " \"utilization_pct\": 12, \"memory_used_mib\": 2048, \"memory_total_mib\": 16384, \"power_w\": null, \"ranks\": [1]}]}\n");
        Files.writeString(folder.resolve("metrics/stragglers.json"), "{\"stragglers\": [{\"rank\": 1, \"node\": \"b\", \"why\": \"step time 2.0x"
                + " the median\", \"from\": \"2026-12-01T10:00:40Z\", \"to\": null}]}");
    }

    static String line(int rank, int attempt, int step, int second, double loss) {
        return "{\"time\": \"2026-12-01T10:00:" + String.format("%02d", second) + "Z\", \"rank\": " + rank + ", \"attempt\": " + attempt
                + ", \"step\": " + step + ", \"loss\": " + loss + "}\n";
    }

    @Test
    void topShowsEachRanksGpuStepAndRateAndNamesTheStraggler() {
        RunRecords.Run r = RunRecords.read(folder, Map.of());
        assertThat(r.state()).isEqualTo("running");
        assertThat(String.join("\n", TopView.text(TopView.rows(r, NOW)))).isEqualTo(String.join("\n",
                " rank  node          gpu     util  memory             power      step  step time  rate          output      state",
                "    0  a             0        97%  30.0/40.0 GiB      251 W        26    1.000 s  1.00 step/s   2 s ago     running",
                "    1  b             1        12%  2.0/16.0 GiB         n/a        13    2.000 s  0.50 step/s   40 s ago    running *",
                "* straggler: rank 1 on b: step time 2.0x the median"));
        assertThat(TopView.sparkline(r)).contains("rank 0 loss \u2588\u2588\u2587\u2582\u2581\u2581\u2581\u2581\u2581\u2581 0.037037037037037035"
                + " (its last 10)");
    }

    @Test
    void statusShowsEachRanksLastLinePrintableAndMarksTheSilentOne() {
        RunRecords.Run r = RunRecords.read(folder, Map.of());
        assertThat(String.join("\n", StatusView.text(ID, StatusView.rows(r, NOW)))).isEqualTo(String.join("\n",
                "node              rank  state            pid  last output   last line",
                "a                    0  running          101  2 s ago       step 30 loss 0.5",
                "b                    1  running          202  40 s ago *    step 10  [31mloss [0m 0.9",
                "* silent far longer than the other ranks: runjob stacks " + ID + " shows where every rank is"));
        assertThat(Progress.of(r).orElseThrow().text()).isEqualTo("step 26 of 100 (26%), 1.00 steps/s, ETA 74 s");
    }

    @Test
    void plotChartsEachMetricPerRankAndAttemptWithTheRestartMarked() throws Exception {
        PlotPage.Data d = PlotPage.data(RunRecords.read(folder, Map.of()), Optional.empty());
        assertThat(d.metrics()).containsExactly("loss");
        assertThat(Json.compact(d.json().get("attempts"))).isEqualTo("[{\"attempt\":0,\"t\":0.0},{\"attempt\":1,\"t\":22.0}]");
        assertThat(Json.compact(d.json().get("metrics").get("loss").get("1")))
                .isEqualTo("[[22.0,0.3333333333333333,1],[26.0,0.14285714285714285,1],[30.0,0.09090909090909091,1],[34.0,0.06666666666666667,1],"
                        + "[38.0,0.05263157894736842,1],[42.0,0.043478260869565216,1],[46.0,0.037037037037037035,1]]");
        assertThat(d.json().get("metrics").get("loss").get("0").size()).isEqualTo(10);
        assertThat(Json.compact(d.json().get("gpu"))).isEqualTo("{\"0\":[[49.0,97.0,1]],\"1\":[[49.0,12.0,1]]}");
        assertThat(d.json().get("end").asDouble()).isEqualTo(49.0);
    }
}
