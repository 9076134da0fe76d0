package org.runjob.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.backends.Backends;
import org.runjob.session.Interrupts;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;
import org.runjob.spec.SchemaCheck;
import org.runjob.spec.SpecLoader;

/** A quarantined node the job names is refused or stood in for; one the scheduler placed the run on is noted and used. */
class QuarantinedTest {

    private static final Instant NOW = Instant.parse("2026-12-07T05:00:00Z");

    @TempDir
    Path tmp;

    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private Io io() {
        PrintStream sink = new PrintStream(err, true, StandardCharsets.UTF_8);
        return new Io(sink, sink, Map.of("XDG_STATE_HOME", tmp.resolve("state").toString(), "HOME", tmp.toString()),
                Clock.fixed(NOW, ZoneOffset.UTC), () -> 0, false, Interrupts.none());
    }

    private JobSpec spec() throws Exception {
        Path f = Files.writeString(tmp.resolve("job.yaml"), "name: train\nnodes:\n  - {name: h1, host: 192.0.2.1, workers: 1}\n"
                + "  - {name: h2, host: 192.0.2.2, workers: 1}\nentrypoint: {command: [python3, t.py]}\n");
        return new SpecLoader(Map.of(), Backends.specs(), new SchemaCheck(Backends.specs())).load(f, "job.yaml", List.of()).spec();
    }

    @Test
    void aQuarantinedNodeTheSchedulerPlacedTheRunOnIsNotedAndUsedOneTheJobNamesIsRefused() throws Exception {
        JobSpec spec = spec();
        NodeSpec h2 = spec.nodes().get(1);
        new QuarantineFile(io().env(), io().clock(), "20261207-040000-ab12", "train", 3600, s -> { }).add(h2, "lost: a fresh connection failed too");
        Optional<JobSpec> placed = Quarantined.avoid(io(), spec, true);
        assertThat(placed).contains(spec);
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("runjob: note: node h2 is quarantined since 2026-12-07T05:00:00Z until"
                + " 2026-12-07T06:00:00Z (192.0.2.2:22; run 20261207-040000-ab12 of job train): lost: a fresh connection failed too; the"
                + " scheduler placed the run there, so it runs there (runjob nodes --clear h2 uses it again)\n");
        err.reset();
        assertThat(Quarantined.avoid(io(), spec, false)).isEmpty();
        assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("runjob: node h2 is quarantined since ").endsWith("; no spare fits its place."
                + " Use it again with: runjob nodes --clear h2\n");
    }
}
