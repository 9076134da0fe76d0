package org.runjob.runs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.Chromium;

/** plot's axes, as headless Chromium renders them: a loss over decades on a log scale, GPU utilization 0-100 %. */
class PlotAxesTest {

    @TempDir
    Path tmp;

    private static String section(String dom, String metric) {
        int start = dom.indexOf("<section class=\"chart\" data-metric=\"" + metric + "\">");
        assertThat(start).as("a chart of " + metric).isNotNegative();
        return dom.substring(start, dom.indexOf("</section>", start));
    }

    @Test
    void aLossSpanningDecadesIsOnALogScaleAndGpuUtilizationOnZeroToAHundred() throws Exception {
        String id = "20261202-120000-abcd";
        Path folder = Files.createDirectories(tmp.resolve("runs/train/" + id + "/metrics"));
        StringBuilder ranks = new StringBuilder();
        StringBuilder gpu = new StringBuilder();
        for (int i = 0; i < 5; i++) {
            String t = "2026-12-02T12:00:0" + i + "Z";
            ranks.append("{\"time\":\"").append(t).append("\",\"rank\":0,\"attempt\":0,\"step\":").append(i)
                    .append(",\"loss\":").append(Math.pow(10, 1 - i)).append(",\"lr\":0.1}\n");
            gpu.append("{\"time\":\"").append(t).append("\",\"node\":\"h1\",\"attempt\":0,\"gpus\":[{\"index\":0,\"utilization_pct\":")
                    .append(40 + i).append(",\"ranks\":[0]}]}\n");
        }
        Files.writeString(folder.resolve("rank-0.jsonl"), ranks);
        Files.writeString(folder.resolve("gpu-h1.jsonl"), gpu);
        Files.writeString(folder.getParent().resolve("summary.json"), "{\"result\": \"succeeded\", \"exit_code\": 0}");
        Cli plot = Cli.run(Map.of(), "plot", id, "--logs-dir", tmp.resolve("runs").toString());
        assertThat(plot.code()).as(plot.err()).isZero();
        Chromium.Page page = Chromium.render(Path.of(plot.out().strip()), Files.createDirectories(tmp.resolve("chromium")));
        assertThat(page.console()).isEmpty();
        String loss = section(page.dom(), "loss");
        assertThat(loss).contains("data-scale=\"log\"").contains(">loss (log scale)</h2>").contains(">10</text>").contains(">1.00e-3</text>");
        String lr = section(page.dom(), "lr");
        assertThat(lr).contains("data-scale=\"linear\"");
        String util = section(page.dom(), "GPU utilization");
        assertThat(util).contains("data-scale=\"linear\"").contains(">0</text>").contains(">100</text>").contains(">50</text>");
    }
}
