package org.runjob.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

import org.runjob.runtime.Cgroup;

/** The cgroup of the Slurm step this agent runs in, which its workers' containers stay under. */
final class StepCgroup {

    private StepCgroup() {
    }

    /**
     * The step's cgroup when {@code env} is a Slurm step's ({@code SLURM_STEP_ID}) and this process
     * is in a cgroup of its job (Slurm's cgroup plugins name it {@code .../job_ID/...}); empty
     * elsewhere, or when unreadable.
     */
    static Optional<Cgroup> of(Map<String, String> env) {
        String job = env.get("SLURM_JOB_ID");
        if (!env.containsKey("SLURM_STEP_ID") || job == null) {
            return Optional.empty();
        }
        try {
            return Cgroup.of(Files.readAllLines(Path.of("/proc/self/cgroup")), "/job_" + job + "/");
        } catch (IOException e) {
            return Optional.empty();
        }
    }
}
