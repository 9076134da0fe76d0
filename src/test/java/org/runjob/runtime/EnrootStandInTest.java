package org.runjob.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.FakeCuda;

/**
 * enroot's command line run end to end through a stand-in that does what enroot's documentation
 * says {@code start} does with it (src/test/resources/standins/enroot: only the passed variables
 * inside, mount sources checked, the home directory as the start): every rank starts in the run's
 * directory with its own variables, its GPUs by {@code NVIDIA_VISIBLE_DEVICES} numbered from 0
 * inside, nothing else of the agent's environment, and a node without a runtime named is told
 * which one it has. enroot itself is not in the test suite (no Debian package).
 */
class EnrootStandInTest {

    @TempDir
    Path tmp;

    private Map<String, String> env() throws Exception {
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Path enroot = bin.resolve("enroot");
        Files.copy(Path.of("src/test/resources/standins/enroot"), enroot);
        Files.setPosixFilePermissions(enroot, PosixFilePermissions.fromString("rwxr-xr-x"));
        Map<String, String> env = FakeCuda.env("NVIDIA A30|24576|0|8.0|0000:17:00;NVIDIA A30|24576|0|8.0|0000:31:00;"
                + "NVIDIA A30|24576|0|8.0|0000:b1:00");
        env.put("HOME", Files.createDirectories(tmp.resolve("home")).toString());
        env.put("PATH", bin + ":" + env.get("PATH"));
        env.put("AGENT_ONLY", "not for workers");
        return env;
    }

    private Path job(String runtime, String image) throws Exception {
        return Files.writeString(tmp.resolve("enroot.yaml"), "name: enr\nnodes:\n  - {name: a, local: true, workers: 2, gpus: [0, 2]}\n"
                + "  - {name: b, local: true, workers: 1}\n"
                + "workdir: " + tmp.resolve("my work") + "\nlogs: {dir: " + tmp.resolve("runs") + "}\n"
                + "env: {MESSAGE: 'hello there'}\n"
                + "environment: {container: {runtime: " + runtime + ", image: '" + image + "', mounts: ['" + tmp + ":/data:ro']}}\n"
                + "entrypoint: {command: [sh, -c, 'echo rank $RANK in $(pwd) cuda $CUDA_VISIBLE_DEVICES nvidia $NVIDIA_VISIBLE_DEVICES"
                + " message $MESSAGE agent ${AGENT_ONLY:-unset}']}\n");
    }

    @Test
    void everyRankStartsInItsRunsDirectoryWithItsVariablesAndGpusAndNoneOfTheAgents() throws Exception {
        Path image = Files.writeString(tmp.resolve("pytorch.sqsh"), "");
        Cli r = Cli.run(env(), job("enroot", image.toString()).toString());
        assertThat(r.code()).as(r.err()).isZero();
        String run = r.err().replaceAll("(?s).*runjob: enr run (\\S+):.*", "$1");
        Path dir = tmp.resolve("my work/runs").resolve(run);
        assertThat(r.out().lines().sorted().toList()).containsExactly(
                "[a/0] rank 0 in " + dir + " cuda 0,1 nvidia 0,2 message hello there agent unset",
                "[a/1] rank 1 in " + dir + " cuda 0,1 nvidia 0,2 message hello there agent unset",
                "[b/2] rank 2 in " + dir + " cuda nvidia void message hello there agent unset");
    }

    @Test
    void aMissingImageFileAndAnImageEnrootCannotStartAreRefusedAndANodeWithoutPodmanIsToldItHasEnroot() throws Exception {
        Map<String, String> env = env();
        Cli missing = Cli.run(env, job("enroot", tmp.resolve("none.sqsh").toString()).toString());
        assertThat(missing.code()).isEqualTo(3);
        assertThat(missing.err()).contains("no image file " + tmp.resolve("none.sqsh") + " on this node");

        Cli uri = Cli.run(env, "validate", job("enroot", "docker://nvcr.io#nvidia/pytorch:24.05-py3").toString());
        assertThat(uri.code()).isEqualTo(2);
        assertThat(uri.err()).contains("/environment/container/image: enroot starts a squashfs file or a container it created");

        // this node's PATH has the stand-in enroot and every program of /usr/bin but podman, docker and apptainer
        Path tools = Files.createDirectories(tmp.resolve("tools"));
        try (var all = Files.list(Path.of("/usr/bin"))) {
            for (Path t : all.filter(p -> !Set.of("podman", "docker", "apptainer").contains(p.getFileName().toString())).toList()) {
                Files.createSymbolicLink(tools.resolve(t.getFileName()), t);
            }
        }
        env.put("PATH", tmp.resolve("bin") + ":" + tools);
        Cli podman = Cli.run(env, job("podman", "localhost/train:1").toString());
        assertThat(podman.code()).isEqualTo(3);
        assertThat(podman.err()).contains("no podman on this node's PATH: it has enroot, env (runtime: enroot)");
    }
}
