package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.Testbed;

/** The seed's DDP training (jobs/local-ddp.yaml) with real PyTorch, gloo on CPU, two local nodes of two workers. */
@Tag("torch")
class DdpTest {

    static final String PYTHON = "/usr/bin/python3";

    @TempDir
    Path tmp;

    @Test
    void eachRankTrainsOnItsOwnRowAndAllEndWithIdenticalWeights() {
        Testbed.require(Testbed.runs(PYTHON, "-c", "import torch.distributed"), "PyTorch for " + PYTHON + " (Debian: python3-torch)");
        Cli r = Cli.run(System.getenv(), "--set", "entrypoint.command=[" + PYTHON + ", train.py]",
                "--set", "logs.dir=" + tmp.resolve("runs"), "--set", "workdir=" + tmp.resolve("work"), "jobs/local-ddp.yaml");
        assertThat(r.code()).as(r.err()).isZero();
        Pattern trained = Pattern.compile("\\[local[12]/(\\d)] rank (\\d) trained on row (0\\.\\d)");
        Pattern weights = Pattern.compile("\\[local[12]/(\\d)] rank (\\d) weights (\\[.*])");
        Map<Integer, String> rows = new HashMap<>();
        Map<Integer, String> finals = new HashMap<>();
        for (String line : r.out().lines().toList()) {
            Matcher t = trained.matcher(line);
            if (t.matches()) {
                assertThat(t.group(1)).isEqualTo(t.group(2));
                rows.put(Integer.parseInt(t.group(2)), t.group(3));
            }
            Matcher w = weights.matcher(line);
            if (w.matches()) {
                finals.put(Integer.parseInt(w.group(2)), w.group(3));
            }
        }
        assertThat(rows).containsExactlyInAnyOrderEntriesOf(Map.of(0, "0.1", 1, "0.2", 2, "0.3", 3, "0.4"));
        assertThat(finals).hasSize(4);
        assertThat(finals.values()).as("DDP keeps every replica identical").containsOnly(finals.get(0));
    }
}
