package org.runjob.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

/** The ENVIRONMENT request and its reply round-trip every field; the container's command line is exact for each runtime. */
class EnvironmentWireTest {

    static final ContainerStart PODMAN = new ContainerStart("podman", "localhost/train:1", List.of("/data:/data:ro"), List.of());

    @Test
    void aRequestAndAReplyRoundTripEveryField() {
        EnvironmentRequest r = new EnvironmentRequest("python3", "venv", "envs/t1", List.of("cuda/12.1", "nccl"), List.of("env.sh", "/etc/x"),
                List.of("pip install --no-index ./pkg"), 600_000, "ab".repeat(32), EnvironmentRequest.Setup.FORCE, true,
                Map.of("A", "it's \"x\"", "EMPTY", ""), Optional.of(PODMAN));
        assertThat(EnvironmentRequest.decode(r.encode())).isEqualTo(r);
        EnvironmentRequest bare = new EnvironmentRequest("java", "", "", List.of(), List.of(), List.of(), 1000, "",
                EnvironmentRequest.Setup.CHECK, false, Map.of(), Optional.empty());
        assertThat(EnvironmentRequest.decode(bare.encode())).isEqualTo(bare);

        EnvironmentReply reply = new EnvironmentReply(Map.of(EnvironmentReply.TORCH, "2.1.0", EnvironmentReply.PROGRAM_PATH, "/a b/python3"),
                Map.of("PATH", "/v/bin:/usr/bin", "MULTI", "a\nb\u0000c"), List.of("PYTHONHOME"));
        assertThat(EnvironmentReply.decode(reply.encode())).isEqualTo(reply);
        byte[] longer = Arrays.copyOf(reply.encode(), reply.encode().length + 3);
        assertThatThrownBy(() -> EnvironmentReply.decode(longer)).hasMessage("bytes after the ENVIRONMENT reply: 3");
    }

    @Test
    void anotherFormatOrATruncatedPayloadIsRefused() {
        byte[] bytes = new EnvironmentRequest("python3", "", "", List.of(), List.of(), List.of(), 1, "", EnvironmentRequest.Setup.WHEN_DUE,
                true, Map.of("A", "B"), Optional.empty()).encode();
        byte[] other = bytes.clone();
        other[0] = 7;
        assertThatThrownBy(() -> EnvironmentRequest.decode(other)).hasMessage("ENVIRONMENT payload format 7, expected 1");
        assertThatThrownBy(() -> EnvironmentRequest.decode(Arrays.copyOf(bytes, bytes.length - 2))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EnvironmentReply.decode(new byte[] {0, 0, 0})).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void podmanRunsTheWorkerOnTheHostsNetworkPidsAndIpcWithItsDirectoryAndVariablesByName() {
        assertThat(PODMAN.argv("/w/runs/R", List.of("/tmp/hook"), List.of("RANK", "CUDA_VISIBLE_DEVICES"), List.of("2", "5"), "R", 3, "A1",
                "T1", List.of("python3", "train.py"))).containsExactly(
                "podman", "run", "--label", "runjob.run=R", "--label", "runjob.rank=3", "--label", "runjob.agent=A1",
                "--label", "runjob.token=T1", "--network", "host", "--pid", "host", "--ipc", "host",
                "--device", "nvidia.com/gpu=2", "--device", "nvidia.com/gpu=5",
                "-v", "/w/runs/R:/w/runs/R", "-w", "/w/runs/R", "-v", "/tmp/hook:/tmp/hook", "-v", "/data:/data:ro",
                "-e", "RANK", "-e", "CUDA_VISIBLE_DEVICES=0,1", "localhost/train:1", "python3", "train.py");
    }

    @Test
    void dockerTakesGpusByItsOwnFlagAndAnShmSizeOrPidOptionReplacesTheHostDefault() {
        ContainerStart docker = new ContainerStart("docker", "img", List.of(), List.of("--shm-size", "8g", "--pid=private"));
        assertThat(docker.argv("/d", List.of(), List.of("RANK"), List.of("1"), "R", 0, "A", "T", List.of("python3"))).containsExactly(
                "docker", "run", "--label", "runjob.run=R", "--label", "runjob.rank=0", "--label", "runjob.agent=A",
                "--label", "runjob.token=T", "--network", "host", "--gpus", "device=1", "-v", "/d:/d", "-w", "/d", "-e", "RANK",
                "--shm-size", "8g", "--pid=private", "img", "python3");
    }

    @Test
    void apptainerExecsWithTheGpusAClearedEnvironmentAndTheDirectoryBound() {
        ContainerStart apptainer = new ContainerStart("apptainer", "/images/t.sif", List.of("/data"), List.of("--contain"));
        assertThat(apptainer.labelled()).isFalse();
        assertThat(apptainer.argv("/d", List.of("/h"), List.of("RANK"), List.of("0"), "R", 0, "A", "T", List.of("python3", "t.py")))
                .containsExactly("apptainer", "exec", "--nv", "--cleanenv", "--bind", "/d", "--pwd", "/d", "--bind", "/h", "--bind", "/data",
                        "--contain", "/images/t.sif", "python3", "t.py");
    }
}
