package org.runjob.runtime;

import java.util.ArrayList;
import java.util.List;

/**
 * podman: GPUs as CDI devices ({@code --device nvidia.com/gpu=N}). In a scheduler's step the
 * container stays in the step's cgroup, so the step's memory limit, accounting and cleanup reach
 * it: on cgroup v2 {@code --cgroups=split} (conmon and the container in two sub-cgroups of the
 * client's), on cgroup v1, where podman refuses split, {@code --cgroup-parent=STEP}. A
 * {@code --cgroups} or {@code --cgroup-parent} in the job file's options replaces either.
 */
public final class Podman extends DockerCli {

    @Override
    public String name() {
        return "podman";
    }

    @Override
    protected List<String> gpuOptions(List<String> gpus) {
        List<String> out = new ArrayList<>();
        gpus.forEach(g -> out.addAll(List.of("--device", "nvidia.com/gpu=" + g)));
        return out;
    }

    @Override
    protected List<String> cgroupOptions(Container c, WorkerStartArgs s) {
        if (s.step().isEmpty() || c.hasOption("--cgroups", "--cgroup-parent")) {
            return List.of();
        }
        Cgroup step = s.step().get();
        return step.version() == 2 ? List.of("--cgroups=split") : List.of("--cgroup-parent=" + step.path());
    }
}
