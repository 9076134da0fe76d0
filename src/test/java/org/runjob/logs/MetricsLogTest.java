package org.runjob.logs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MetricsLogTest {

    @TempDir
    Path dir;

    @Test
    void eachObjectIsTaggedWithTimeRankAndAttemptAndWhatIsNotOneObjectIsCounted() throws Exception {
        Clock clock = Clock.fixed(Instant.parse("2026-12-06T10:00:00Z"), ZoneOffset.UTC);
        try (MetricsLog log = new MetricsLog(dir, clock)) {
            log.accept(1, 0, ("{\"step\": 1, \"loss\": 0.5}\n"
                    + "not json\n"
                    + "[1, 2]\n"
                    + "{\"step\": 2, \"loss\": 0.25, \"rank\": 99}\n"
                    + "\n"
                    + "{\"step\": 3\n"
                    + "7\n").getBytes(StandardCharsets.UTF_8));
            log.accept(1, 1, "{\"step\": 3, \"loss\": 0.125}\n".getBytes(StandardCharsets.UTF_8));
            assertThat(log.counts()).containsEntry(1, new MetricsLog.Counts(3, 4));
            assertThat(log.last().get(1).toString()).isEqualTo("{\"time\":\"2026-12-06T10:00:00Z\",\"rank\":1,\"attempt\":1,\"step\":3,\"loss\":0.125}");
        }
        assertThat(Files.readAllLines(dir.resolve("metrics/rank-1.jsonl"))).containsExactly(
                "{\"time\":\"2026-12-06T10:00:00Z\",\"rank\":1,\"attempt\":0,\"step\":1,\"loss\":0.5}",
                "{\"time\":\"2026-12-06T10:00:00Z\",\"rank\":1,\"attempt\":0,\"step\":2,\"loss\":0.25}",
                "{\"time\":\"2026-12-06T10:00:00Z\",\"rank\":1,\"attempt\":1,\"step\":3,\"loss\":0.125}");
        assertThat(dir.resolve("metrics/rank-0.jsonl")).doesNotExist();
    }

    @Test
    void thePrometheusFileHoldsTheLatestGpuSamplesAndNumericMetrics() throws Exception {
        Clock clock = Clock.fixed(Instant.parse("2026-12-06T10:00:00Z"), ZoneOffset.UTC);
        Path prom = dir.resolve("runjob.prom");
        try (MetricsLog log = new MetricsLog(dir, clock)) {
            log.exportTo(prom, "train", "r1");
            log.gpu("h1", 0, "{\"time\":\"2026-12-06T10:00:00Z\",\"gpus\":[{\"index\":0,\"utilization_pct\":37,\"memory_used_mib\":1024,"
                    + "\"memory_total_mib\":16384,\"power_w\":71.5,\"temperature_c\":45,\"sm_clock_mhz\":1410,\"ranks\":[0]},"
                    + "{\"index\":1,\"utilization_pct\":null,\"memory_used_mib\":null,\"memory_total_mib\":null,\"power_w\":null,"
                    + "\"temperature_c\":null,\"sm_clock_mhz\":null,\"ranks\":[1]}]}");
            log.accept(0, 0, "{\"step\": 3, \"loss\": 0.25, \"phase\": \"train\"}\n".getBytes(StandardCharsets.UTF_8));
        }
        assertThat(Files.readString(prom)).isEqualTo(String.join("\n",
                "# HELP runjob_gpu_memory_total_bytes GPU memory, bytes",
                "# TYPE runjob_gpu_memory_total_bytes gauge",
                "runjob_gpu_memory_total_bytes{job=\"train\",run=\"r1\",node=\"h1\",gpu=\"0\"} 17179869184",
                "# HELP runjob_gpu_memory_used_bytes GPU memory in use, bytes",
                "# TYPE runjob_gpu_memory_used_bytes gauge",
                "runjob_gpu_memory_used_bytes{job=\"train\",run=\"r1\",node=\"h1\",gpu=\"0\"} 1073741824",
                "# HELP runjob_gpu_power_watts GPU power draw, watts",
                "# TYPE runjob_gpu_power_watts gauge",
                "runjob_gpu_power_watts{job=\"train\",run=\"r1\",node=\"h1\",gpu=\"0\"} 71.5",
                "# HELP runjob_gpu_sm_clock_hertz GPU SM clock, hertz",
                "# TYPE runjob_gpu_sm_clock_hertz gauge",
                "runjob_gpu_sm_clock_hertz{job=\"train\",run=\"r1\",node=\"h1\",gpu=\"0\"} 1410000000",
                "# HELP runjob_gpu_temperature_celsius GPU temperature, degrees Celsius",
                "# TYPE runjob_gpu_temperature_celsius gauge",
                "runjob_gpu_temperature_celsius{job=\"train\",run=\"r1\",node=\"h1\",gpu=\"0\"} 45",
                "# HELP runjob_gpu_utilization_percent GPU utilization, percent (NVML)",
                "# TYPE runjob_gpu_utilization_percent gauge",
                "runjob_gpu_utilization_percent{job=\"train\",run=\"r1\",node=\"h1\",gpu=\"0\"} 37",
                "# HELP runjob_metric the rank's last value of a numeric field of its RUNJOB_METRICS_FILE",
                "# TYPE runjob_metric gauge",
                "runjob_metric{job=\"train\",run=\"r1\",rank=\"0\",name=\"step\"} 3",
                "runjob_metric{job=\"train\",run=\"r1\",rank=\"0\",name=\"loss\"} 0.25", ""));
        try (var left = Files.list(dir)) {
            assertThat(left.map(p -> p.getFileName().toString()).sorted().toList()).containsExactly("metrics", "runjob.prom");
        }
    }
}
