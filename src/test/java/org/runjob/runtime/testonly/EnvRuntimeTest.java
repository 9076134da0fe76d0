package org.runjob.runtime.testonly;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.runtime.WorkerRuntimes;
import org.runjob.testbed.HomeEnv;
import org.runjob.testbed.LocalJobs;

/**
 * A worker runtime that lives only in the test sources ({@link EnvRuntime}, one service line)
 * goes through every stage: the job file names it, the dry run shows its command line, preflight
 * runs its image check on the node, and the agents start every rank through it.
 */
class EnvRuntimeTest {

    @TempDir
    Path tmp;

    private Path job(String image) throws Exception {
        return LocalJobs.twoNodes(tmp, "envrt", "environment: {container: {runtime: env, image: '" + image + "', options: [RUNJOB_TEST_OPTION=on]}}\n",
                "echo rank $RANK image $RUNJOB_TEST_IMAGE option $RUNJOB_TEST_OPTION");
    }

    private Map<String, String> env() throws Exception {
        return HomeEnv.in(tmp);
    }

    @Test
    void theRegistryFindsItByItsServiceLine() {
        assertThat(WorkerRuntimes.named("env")).isInstanceOf(EnvRuntime.class);
        assertThat(WorkerRuntimes.names()).isEqualTo("podman, docker, apptainer, enroot or env");
    }

    @Test
    void aJobRunsThroughItFromTheDryRunToEveryRank() throws Exception {
        Path image = Files.writeString(tmp.resolve("image"), "");
        Path ok = job(image.toString());
        var plan = Cli.run(env(), "--dry-run", ok.toString());
        assertThat(plan.code()).as(plan.err()).isZero();
        assertThat(plan.out()).contains("container             env " + image + "\n")
                .contains("env RUNJOB_TEST_IMAGE=" + image + " 'RUNJOB_TEST_TOKEN=<start>' RUNJOB_TEST_OPTION=on sh -c");

        var run = Cli.run(env(), ok.toString());
        assertThat(run.code()).as(run.err()).isZero();
        assertThat(run.out().lines().sorted().toList()).containsExactly(
                "[a/0] rank 0 image " + image + " option on", "[a/1] rank 1 image " + image + " option on",
                "[b/2] rank 2 image " + image + " option on");
    }

    @Test
    void itsImageCheckRunsOnTheNodeAndAnUnknownRuntimeIsNamed() throws Exception {
        var missing = Cli.run(env(), job(tmp.resolve("no-image").toString()).toString());
        assertThat(missing.code()).isEqualTo(3);
        assertThat(missing.err()).contains("no image file " + tmp.resolve("no-image") + " on this node");

        Path bad = Files.writeString(tmp.resolve("bad.yaml"), Files.readString(job("x")).replace("runtime: env", "runtime: singularity"));
        var r = Cli.run(env(), "validate", bad.toString());
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("/environment/container/runtime: unknown container runtime 'singularity': must be podman, docker,"
                + " apptainer, enroot or env");
    }
}
