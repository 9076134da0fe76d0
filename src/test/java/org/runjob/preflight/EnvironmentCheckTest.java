package org.runjob.preflight;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.backends.Backends;
import org.runjob.distribute.FileList;
import org.runjob.protocol.EnvironmentReply;
import org.runjob.protocol.EnvironmentRequest;
import org.runjob.spec.EnvironmentSpec;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;
import org.runjob.spec.SpecLoader;

/** Nodes whose torch, CUDA or NCCL differ are named; setup's key follows what it names and nothing else. */
class EnvironmentCheckTest {

    @TempDir
    Path tmp;

    private JobSpec job(String environment) throws Exception {
        Path file = tmp.resolve("job.yaml");
        Files.writeString(tmp.resolve("pkg.txt"), "one");
        Files.writeString(tmp.resolve("other.txt"), "x");
        Files.writeString(file, "name: j\nnodes:\n  - {name: h1, host: a, workers: 1}\n  - {name: h2, host: b, workers: 1}\n"
                + "  - {name: h3, host: c, workers: 1}\nentrypoint: {command: [python3, t.py]}\nfiles: [pkg.txt, other.txt]\n" + environment);
        return new SpecLoader(Map.of(), Backends.specs()).load(file, "job.yaml", List.of()).spec();
    }

    private static EnvironmentReply reply(String torch, String cuda) {
        Map<String, String> facts = new LinkedHashMap<>(Map.of(EnvironmentReply.PYTHON, "3.11.2", EnvironmentReply.TORCH, torch));
        if (cuda != null) {
            facts.put(EnvironmentReply.CUDA, cuda);
        }
        return new EnvironmentReply(facts, Map.of(), List.of());
    }

    private static Map<String, Map<Check, Cell>> cells(JobSpec spec) {
        Map<String, Map<Check, Cell>> cells = new LinkedHashMap<>();
        spec.nodes().forEach(n -> cells.put(n.name(), new EnumMap<>(Map.of(Check.ENVIRONMENT, Cell.ok("ok")))));
        return cells;
    }

    @Test
    void theOddNodeFailsNamingTheFieldItsValueAndTheOthers() throws Exception {
        JobSpec spec = job("");
        Map<String, Map<Check, Cell>> cells = cells(spec);
        new EnvironmentCheck(spec, List.of(), EnvironmentRequest.Setup.CHECK, false, Optional.empty(), EnvironmentCheck.SetupOutput.NONE,
                () -> false)
                .judge(cells, Map.of("h1", reply("1.13.0", "11.7"), "h2", reply("2.1.0", "11.7"), "h3", reply("1.13.0", null)));
        assertThat(cells.get("h1").get(Check.ENVIRONMENT)).isEqualTo(Cell.ok("ok"));
        assertThat(cells.get("h2").get(Check.ENVIRONMENT)).isEqualTo(Cell.fail("torch 2.1.0 here, 1.13.0 on h1, h3: every node must run"
                + " the same (on_skew: warn lets the run start)"));
        assertThat(cells.get("h3").get(Check.ENVIRONMENT)).isEqualTo(Cell.fail("CUDA none here, 11.7 on h1, h2: every node must run the"
                + " same (on_skew: warn lets the run start)"));
    }

    @Test
    void onSkewWarnMakesItAWarningAndEqualNodesPass() throws Exception {
        JobSpec spec = job("environment: {on_skew: warn}\n");
        Map<String, Map<Check, Cell>> cells = cells(spec);
        EnvironmentCheck check = new EnvironmentCheck(spec, List.of(), EnvironmentRequest.Setup.CHECK, false, Optional.empty(),
                EnvironmentCheck.SetupOutput.NONE, () -> false);
        check.judge(cells, Map.of("h1", reply("1.13.0", null), "h2", reply("2.1.0", null), "h3", reply("1.13.0", null)));
        assertThat(cells.get("h2").get(Check.ENVIRONMENT).status()).isEqualTo(Cell.Status.WARN);
        Map<String, Map<Check, Cell>> same = cells(spec);
        check.judge(same, Map.of("h1", reply("2.1.0", "12.1"), "h2", reply("2.1.0", "12.1"), "h3", reply("2.1.0", "12.1")));
        same.values().forEach(row -> assertThat(row.get(Check.ENVIRONMENT)).isEqualTo(Cell.ok("ok")));
    }

    @Test
    void setupsKeyChangesWithItsCommandsAndTheFilesTheyNameOnly() throws Exception {
        JobSpec spec = job("environment: {setup: ['pip install ./pkg.txt']}\n");
        EnvironmentSpec e = spec.nodes().get(0).environment();
        List<FileList.Entry> files = FileList.of(spec.files());
        String key = EnvironmentCheck.setupKey(e, files);
        assertThat(key).matches("[0-9a-f]{64}").isEqualTo(EnvironmentCheck.setupKey(e, files));
        Files.writeString(tmp.resolve("other.txt"), "changed, but no setup command names it");
        assertThat(EnvironmentCheck.setupKey(e, files)).isEqualTo(key);
        Files.writeString(tmp.resolve("pkg.txt"), "two");
        Files.setLastModifiedTime(tmp.resolve("pkg.txt"), FileTime.fromMillis(1000));
        String changed = EnvironmentCheck.setupKey(e, files);
        assertThat(changed).isNotEqualTo(key);
        EnvironmentSpec other = job("environment: {setup: ['pip install ./pkg.txt', 'true']}\n").nodes().get(0).environment();
        assertThat(EnvironmentCheck.setupKey(other, files)).isNotEqualTo(changed);
        NodeSpec n = spec.nodes().get(0);
        assertThat(EnvironmentCheck.program(spec, n)).isEqualTo("python3");
    }
}
