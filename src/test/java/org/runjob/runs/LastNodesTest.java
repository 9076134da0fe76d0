package org.runjob.runs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.backends.Backends;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;
import org.runjob.spec.SchemaCheck;
import org.runjob.spec.SpecLoader;

/** pull asks each rank's outputs of the node that ran it last: the spares that stood in take their nodes' places. */
class LastNodesTest {

    @TempDir
    Path dir;

    private JobSpec spec() throws Exception {
        Path f = Files.writeString(dir.resolve("job.yaml"), "name: spared\nnodes:\n  - {name: a, host: ha, workers: 1}\n"
                + "  - {name: b, host: hb, workers: 1}\nspares:\n  - {name: c, host: hc, workers: 1}\n  - {name: d, host: hd, workers: 1}\n"
                + "entrypoint: {command: [python3, t.py]}\noutputs: [ckpt]\n");
        return new SpecLoader(Map.of(), Backends.specs(), new SchemaCheck(Backends.specs())).load(f, "job.yaml", List.of()).spec();
    }

    @Test
    void theSparesThatStoodInTakeTheirNodesPlacesInOrder() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("run"));
        Files.writeString(folder.resolve("events.jsonl"), """
                {"time":"t","event":"attempt_start","attempt":0,"nodes":["a","b"]}
                {"time":"t","event":"stand_in","spare":"c","node":"b","node_rank":1,"attempt":1,"reason":"lost"}
                {"time":"t","event":"stand_in","spare":"d","node":"c","node_rank":1,"attempt":2,"reason":"lost"}
                {"time":"t","event":"stand_in","spare":"zz","node":"a","node_rank":0,"attempt":2,"reason":"no such spare"}
                {"time":"t","event":"stand_in","spare":"c","node":"a",""");
        JobSpec ran = LastNodes.of(spec(), folder);
        assertThat(ran.nodes().stream().map(NodeSpec::name).toList()).containsExactly("a", "d");
        assertThat(ran.spares()).isEmpty();
    }

    @Test
    void aRunWithoutEventsOrStandInsIsTheJobAsWritten() throws Exception {
        JobSpec spec = spec();
        assertThat(LastNodes.of(spec, dir.resolve("none"))).isSameAs(spec);
        Path folder = Files.createDirectories(dir.resolve("quiet"));
        Files.writeString(folder.resolve("events.jsonl"), "{\"event\":\"attempt_start\",\"attempt\":0}\n");
        assertThat(LastNodes.of(spec, folder).nodes().stream().map(NodeSpec::name).toList()).containsExactly("a", "b");
    }
}
