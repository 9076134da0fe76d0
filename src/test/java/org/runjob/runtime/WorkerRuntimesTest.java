package org.runjob.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/** Each built-in runtime's command line, variables, image check and record are exact; the registry finds them by name. */
class WorkerRuntimesTest {

    private static WorkerStartArgs start(List<String> more, List<String> names, List<String> gpus, int rank, String agent, String token,
                                         String dir, List<String> argv) {
        return new WorkerStartArgs(dir, more, names, gpus, "R", rank, agent, token, argv);
    }

    @Test
    void podmanRunsTheWorkerOnTheHostsNetworkPidsAndIpcWithItsDirectoryAndVariablesByName() {
        Container c = new Container("localhost/train:1", List.of("/data:/data:ro"), List.of());
        assertThat(WorkerRuntimes.named("podman").argv(c, start(List.of("/tmp/hook"), List.of("RANK", "CUDA_VISIBLE_DEVICES"),
                List.of("2", "5"), 3, "A1", "T1", "/w/runs/R", List.of("python3", "train.py")))).containsExactly(
                "podman", "run", "--label", "runjob.run=R", "--label", "runjob.rank=3", "--label", "runjob.agent=A1",
                "--label", "runjob.token=T1", "--network", "host", "--pid", "host", "--ipc", "host",
                "--device", "nvidia.com/gpu=2", "--device", "nvidia.com/gpu=5",
                "-v", "/w/runs/R:/w/runs/R", "-w", "/w/runs/R", "-v", "/tmp/hook:/tmp/hook", "-v", "/data:/data:ro",
                "-e", "RANK", "-e", "CUDA_VISIBLE_DEVICES=0,1", "localhost/train:1", "python3", "train.py");
    }

    @Test
    void dockerTakesGpusByItsOwnFlagAndAnShmSizeOrPidOptionReplacesTheHostDefault() {
        Container c = new Container("img", List.of(), List.of("--shm-size", "8g", "--pid=private"));
        assertThat(WorkerRuntimes.named("docker").argv(c, start(List.of(), List.of("RANK"), List.of("1"), 0, "A", "T", "/d",
                List.of("python3")))).containsExactly(
                "docker", "run", "--label", "runjob.run=R", "--label", "runjob.rank=0", "--label", "runjob.agent=A",
                "--label", "runjob.token=T", "--network", "host", "--gpus", "device=1", "-v", "/d:/d", "-w", "/d", "-e", "RANK",
                "--shm-size", "8g", "--pid=private", "img", "python3");
    }

    @Test
    void apptainerExecsWithTheGpusAClearedEnvironmentAndTheDirectoryBound() {
        WorkerRuntime apptainer = WorkerRuntimes.named("apptainer");
        Container c = new Container("/images/t.sif", List.of("/data"), List.of("--contain"));
        assertThat(apptainer.argv(c, start(List.of("/h"), List.of("RANK"), List.of("0"), 0, "A", "T", "/d", List.of("python3", "t.py"))))
                .containsExactly("apptainer", "exec", "--nv", "--cleanenv", "--bind", "/d", "--pwd", "/d", "--bind", "/h", "--bind", "/data",
                        "--contain", "/images/t.sif", "python3", "t.py");
        assertThat(apptainer.clientEnvironment(List.of("RANK", "MISSING"), Map.of("RANK", "3", "HOME", "/h")))
                .containsExactly(Map.entry("APPTAINERENV_RANK", "3"));
        assertThat(apptainer.store()).isEmpty();
        assertThat(apptainer.imageCheck("/images/t.sif")).isEqualTo(new ImageCheck.File("/images/t.sif"));
        assertThat(apptainer.imageCheck("docker://python:3.12")).isEqualTo(new ImageCheck.Unchecked());
    }

    @Test
    void enrootStartsInTheClientsOwnTreeWithVariablesByNameTheGpusByNvidiaVisibleDevicesAndChangesToTheDirectory() {
        WorkerRuntime enroot = WorkerRuntimes.named("enroot");
        Container c = new Container("/images/pt.sqsh", List.of("/data:/in:ro", "/scratch"), List.of("--rw"));
        assertThat(enroot.argv(c, start(List.of("/tmp/hook"), List.of("RANK", "CUDA_VISIBLE_DEVICES"), List.of("1", "3"), 0, "A", "T",
                "/w/my runs/R", List.of("python3", "t.py")))).containsExactly(
                "enroot", "start", "--env", "RANK", "--env", "CUDA_VISIBLE_DEVICES=0,1", "--env", "NVIDIA_VISIBLE_DEVICES",
                "--mount", "/w/my\\040runs/R:/w/my\\040runs/R:none:x-create=dir,rbind", "--mount", "/tmp/hook:/tmp/hook:none:x-create=dir,rbind",
                "--mount", "/data:/in:none:x-create=auto,rbind,ro", "--mount", "/scratch:/scratch:none:x-create=auto,rbind", "--rw",
                "/images/pt.sqsh",
                "sh", "-c", "cd -- \"$1\" && shift && exec \"$@\"", "runjob-cd", "/w/my runs/R", "python3", "t.py");
        assertThat(enroot.clientEnvironment(List.of("RANK"), Map.of("RANK", "0", "CUDA_VISIBLE_DEVICES", "1,3")))
                .containsExactly(Map.entry("NVIDIA_VISIBLE_DEVICES", "1,3"));
        // a worker without GPUs gets none, even from an image that asks for all of them
        assertThat(enroot.clientEnvironment(List.of("RANK"), Map.of("RANK", "0"))).containsExactly(Map.entry("NVIDIA_VISIBLE_DEVICES", "void"));
        assertThat(enroot.store()).isEmpty();
        assertThat(enroot.imageCheck("~/images/pt.sqsh")).isEqualTo(new ImageCheck.File("~/images/pt.sqsh"));
        assertThat(enroot.imageCheck("pt.sqsh")).isEqualTo(new ImageCheck.File("pt.sqsh"));
        assertThat(enroot.imageCheck("pytorch")).isEqualTo(new ImageCheck.Unchecked());
        assertThat(enroot.imageProblem("/images/pt.sqsh")).isEmpty();
        assertThat(enroot.imageProblem("docker://nvcr.io#nvidia/pytorch:24.05-py3")).contains("enroot starts a squashfs file or a"
                + " container it created, not 'docker://nvcr.io#nvidia/pytorch:24.05-py3': make one with enroot import -o IMAGE.sqsh"
                + " docker://nvcr.io#nvidia/pytorch:24.05-py3 where the nodes read it, and name that file");
        assertThat(WorkerRuntimes.named("podman").imageProblem("docker://x")).isEmpty();
    }

    @Test
    void aDaemonRuntimeChecksItsImageAndKeepsARecordSpokenAsDockersCommandLine() {
        WorkerRuntime podman = WorkerRuntimes.named("podman");
        assertThat(podman.imageCheck("t:1")).isEqualTo(new ImageCheck.Inspect(
                List.of("podman", "image", "inspect", "--format", "{{.Id}} {{.Digest}}", "t:1")));
        assertThat(podman.clientEnvironment(List.of("RANK"), Map.of("RANK", "1"))).isEmpty();
        ContainerStore store = podman.store().orElseThrow();
        assertThat(store.listArgv("runjob.token=T")).containsExactly("podman", "ps", "-aq", "--filter", "label=runjob.token=T");
        assertThat(store.removeArgv(List.of("abc123", "def456"))).containsExactly("podman", "rm", "-f", "abc123", "def456");
        assertThat(ContainerStore.ids("abc123\n  \nnot an id\ndef4567890\n")).containsExactly("abc123", "def4567890");
    }

    @Test
    void theRegistryListsTheBuiltInsFirstAndFindsThemByName() {
        assertThat(WorkerRuntimes.all().stream().map(WorkerRuntime::name).toList()).startsWith("podman", "docker", "apptainer", "enroot");
        assertThat(WorkerRuntimes.find("singularity")).isEmpty();
        assertThatThrownBy(() -> WorkerRuntimes.named("singularity")).hasMessageStartingWith("unknown container runtime singularity: podman, docker");
    }

    private static final Pattern STEP = Pattern.compile("/job_\\d+/step_[^/]+");

    @Test
    void inASlurmStepPodmanKeepsTheContainerInTheStepsCgroupUnlessTheOptionsSayOtherwise() {
        List<String> v1 = List.of("9:name=systemd:/", "6:freezer:/slurm_h1/uid_0/job_7/step_0", "4:memory:/process_api/x", "0::/");
        assertThat(Cgroup.of(v1, STEP)).contains(new Cgroup(1, "/slurm_h1/uid_0/job_7/step_0"));
        List<String> constrained = List.of("6:freezer:/slurm_h1/uid_0/job_7/step_0", "4:memory:/slurm_h1/uid_0/job_7/step_0/task_0");
        assertThat(Cgroup.of(constrained, STEP)).contains(new Cgroup(1, "/slurm_h1/uid_0/job_7/step_0/task_0"));
        assertThat(Cgroup.of(List.of("0::/system.slice/slurmstepd.scope/job_7/step_0/user/task_0"), STEP))
                .contains(new Cgroup(2, "/system.slice/slurmstepd.scope/job_7/step_0/user/task_0"));
        assertThat(Cgroup.of(List.of("0::/user.slice/session-3.scope"), STEP)).isEmpty();
        assertThat(Cgroup.of(v1, Pattern.compile("/job_8/step_"))).isEmpty();

        WorkerRuntime podman = WorkerRuntimes.named("podman");
        Container c = new Container("img", List.of(), List.of());
        WorkerStartArgs inV1 = new WorkerStartArgs("/d", List.of(), List.of(), List.of(), "R", 0, "A", "T", List.of("true"),
                Cgroup.of(v1, STEP));
        assertThat(podman.argv(c, inV1)).containsSubsequence("--ipc", "host", "--cgroup-parent=/slurm_h1/uid_0/job_7/step_0", "-v", "/d:/d");
        WorkerStartArgs inV2 = new WorkerStartArgs("/d", List.of(), List.of(), List.of(), "R", 0, "A", "T", List.of("true"),
                Optional.of(new Cgroup(2, "/x/job_7/step_0")));
        assertThat(podman.argv(c, inV2)).contains("--cgroups=split").doesNotContain("--cgroup-parent=/x/job_7/step_0");
        assertThat(podman.argv(new Container("img", List.of(), List.of("--cgroups=enabled")), inV2)).doesNotContain("--cgroups=split");
        assertThat(WorkerRuntimes.named("docker").argv(c, inV1)).noneMatch(a -> a.startsWith("--cgroup"));
        assertThat(podman.argv(c, start(List.of(), List.of(), List.of(), 0, "A", "T", "/d", List.of("true")))).noneMatch(a -> a.startsWith("--cgroup"));
    }
}
