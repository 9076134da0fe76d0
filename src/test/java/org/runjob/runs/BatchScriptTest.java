package org.runjob.runs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.backends.Backends;
import org.runjob.node.BatchQueue;
import org.runjob.spec.JobSpec;
import org.runjob.spec.SpecLoader;

/** The batch script of a queued run: a constant exec line, after comments that show each node's environment. */
class BatchScriptTest {

    @TempDir
    Path tmp;

    private JobSpec job(String extra) throws Exception {
        return job(extra, ", environment: {venv: /opt/v2}");
    }

    private JobSpec job(String extra, String h2) throws Exception {
        Path file = tmp.resolve("job.yaml");
        Files.writeString(tmp.resolve("env.sh"), "export A=1\n");
        Files.writeString(file, "name: j\nbackend: slurm\nnodes:\n  - {name: h1, workers: 1}\n"
                + "  - {name: h2, workers: 1" + h2 + "}\nentrypoint: {command: [python3, t.py]}\nfiles: [env.sh]\n" + extra);
        return new SpecLoader(Map.of(), Backends.specs()).load(file, "job.yaml", List.of()).spec();
    }

    @Test
    void eachNodesEnvironmentIsShownAsCommentsAndAValuesNewlineStaysInsideItsComment() throws Exception {
        String script = QueuedRun.script(job("environment: {modules: [\"cuda/12.1\"], source: [env.sh], setup: [\"echo a\\nrm -rf x\"]}\n"));
        assertThat(script).isEqualTo("#!/bin/sh\n# runjob's batch step: the coordinator's argv comes as arguments\n"
                + "# each node's agent step activates its environment there (modules, source, venv or conda,\n"
                + "# setup, container) before its workers start; nothing of it runs in this shell:\n"
                + "#   \"h1\": {\"modules\":[\"cuda/12.1\"],\"source\":[\"env.sh\"],\"setup\":[\"echo a\\nrm -rf x\"],\"setup_timeout_s\":600,\"on_skew\":\"error\"}\n"
                + "#   \"h2\": {\"venv\":\"/opt/v2\",\"modules\":[\"cuda/12.1\"],\"source\":[\"env.sh\"],\"setup\":[\"echo a\\nrm -rf x\"],"
                + "\"setup_timeout_s\":600,\"on_skew\":\"error\"}\n"
                + "exec \"$@\"\n");
        assertThat(script.lines().filter(l -> !l.startsWith("#")).toList()).containsExactly("exec \"$@\"");
    }

    @Test
    void withoutAnEnvironmentTheScriptIsTheConstantOne() throws Exception {
        String script = QueuedRun.script(job("", ""));
        assertThat(script).isEqualTo("#!/bin/sh\n# runjob's batch step: the coordinator's argv comes as arguments\nexec \"$@\"\n");
    }

    @Test
    void theOptionsSbatchWasAskedForAreSbatchLinesFromSlurmsQueueAndAHeterogeneousJobsAComment() throws Exception {
        List<String> queue = List.of("env", "SLURM_HOSTFILE=/r/hostfile", "sbatch", "--parsable", "--job-name=runjob-j", "--comment=runjob:j/1",
                "--output=/r/slurm-%j.out", "--nodelist=h[1-2]", "--constraint=a100&v100", "/r/submit.sh", "java", "-jar", "--not-an-option");
        JobSpec j = job("", "");
        BatchQueue slurm = Backends.of(j).queue().orElseThrow();
        assertThat(QueuedRun.script(j, slurm.scriptHeader(queue))).isEqualTo("#!/bin/sh\n# runjob's batch step: the coordinator's argv comes as arguments\n"
                + "# what sbatch was asked (the same options are on its command line):\n"
                + "#SBATCH --job-name=runjob-j\n#SBATCH --comment=runjob:j/1\n#SBATCH --output=/r/slurm-%j.out\n#SBATCH --nodelist=h[1-2]\n"
                + "#   (on the command line) --constraint=a100&v100\n"
                + "exec \"$@\"\n");
        List<String> het = List.of("sbatch", "--parsable", "--job-name=r", "--nodes=1", ":", "--nodes=2", "/f/submit.sh", "java");
        assertThat(QueuedRun.script(j, slurm.scriptHeader(het))).isEqualTo("#!/bin/sh\n# runjob's batch step: the coordinator's argv comes as arguments\n"
                + "# a heterogeneous job, its components between ':' as sbatch was asked:\n#   '--job-name=r' --nodes=1 : --nodes=2\n"
                + "exec \"$@\"\n");
    }
}
