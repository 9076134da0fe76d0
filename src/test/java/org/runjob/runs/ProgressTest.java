package org.runjob.runs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Progress and ETA from a run folder's metrics and plan. */
class ProgressTest {

    @TempDir
    Path tmp;

    Path run(String metrics, String plan) throws Exception {
        Path folder = Files.createDirectories(tmp.resolve("runs/j/20261201-000000-abcd"));
        Files.createDirectories(folder.resolve("metrics"));
        Files.writeString(folder.resolve("metrics/rank-0.jsonl"), metrics);
        Files.writeString(folder.resolve("plan.json"), plan);
        Files.writeString(folder.resolve("summary.json"), "{\"result\": \"succeeded\", \"exit_code\": 0}");
        return folder;
    }

    static String line(int attempt, int step, String time) {
        return "{\"time\": \"2026-12-01T00:00:" + time + "Z\", \"rank\": 0, \"attempt\": " + attempt + ", \"step\": " + step + ", \"loss\": 1}\n";
    }

    @Test
    void theRateIsTheCurrentAttemptsAndTheEndIsThePlansUnlessTheMetricsSayIt() throws Exception {
        // attempt 0 ran to step 50 fast; attempt 1 began again at 40, 10 steps in 5 s
        Path folder = run(line(0, 0, "00") + line(0, 50, "01") + line(1, 40, "10") + line(1, 45, "12.5") + line(1, 50, "15"),
                "{\"max_steps\": 1000}");
        RunRecords.Run ended = RunRecords.read(folder, Map.of());
        Progress p = Progress.of(ended).orElseThrow();
        assertThat(p.step()).isEqualTo(50);
        assertThat(p.maxSteps()).contains(1000L);
        assertThat(p.stepsPerSecond()).contains(2.0);
        assertThat(p.fraction()).contains(0.05);
        // an ended run has no ETA
        assertThat(p.etaSeconds()).isEmpty();
        assertThat(p.text()).isEqualTo("step 50 of 1000 (5%), 2.00 steps/s");
        Progress live = new Progress(p.step(), p.maxSteps(), p.stepsPerSecond(), true);
        assertThat(live.etaSeconds()).contains(475L);
        assertThat(live.text()).isEqualTo("step 50 of 1000 (5%), 2.00 steps/s, ETA 7 min");
        assertThat(live.json().toString()).isEqualTo("{\"step\":50,\"max_steps\":1000,\"fraction\":0.05,\"steps_per_s\":2.0,\"eta_s\":475}");
    }

    @Test
    void aMaxStepsInTheMetricsWinsAndWithoutStepsThereIsNoProgress() throws Exception {
        Path folder = run("{\"time\": \"2026-12-01T00:00:00Z\", \"attempt\": 0, \"step\": 3, \"max_steps\": 12}\n", "{\"max_steps\": 1000}");
        Progress p = Progress.of(RunRecords.read(folder, Map.of())).orElseThrow();
        assertThat(p.maxSteps()).contains(12L);
        assertThat(p.stepsPerSecond()).isEmpty();
        assertThat(p.text()).isEqualTo("step 3 of 12 (25%)");
        Path none = run("{\"time\": \"2026-12-01T00:00:00Z\", \"loss\": 1}\n", "{}");
        assertThat(Progress.of(RunRecords.read(none, Map.of()))).isEqualTo(Optional.empty());
    }
}
