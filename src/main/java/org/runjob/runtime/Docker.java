package org.runjob.runtime;

import java.util.List;

/** docker: GPUs through the NVIDIA container toolkit ({@code --gpus device=N,M}). */
public final class Docker extends DockerCli {

    @Override
    public String name() {
        return "docker";
    }

    @Override
    protected List<String> gpuOptions(List<String> gpus) {
        return List.of("--gpus", "device=" + String.join(",", gpus));
    }
}
