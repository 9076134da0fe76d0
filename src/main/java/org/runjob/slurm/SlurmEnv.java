package org.runjob.slurm;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The environment runjob gives Slurm's commands: its own, without the variables salloc, srun and
 * sbatch read as options (SLURM_NTASKS, SLURM_HOSTFILE, SRUN_CPUS_PER_TASK, ... set by an
 * allocation runjob itself may run in), which would change the steps it asks for. SLURM_CONF stays.
 */
final class SlurmEnv {

    private SlurmEnv() {
    }

    static Map<String, String> of(Map<String, String> env) {
        Map<String, String> out = new LinkedHashMap<>();
        env.forEach((k, v) -> {
            boolean option = k.startsWith("SLURM_") || k.startsWith("SALLOC_") || k.startsWith("SRUN_") || k.startsWith("SBATCH_");
            if (!option || k.equals("SLURM_CONF")) {
                out.put(k, v);
            }
        });
        return out;
    }

    /** The job id of the allocation runjob runs inside ({@code SLURM_JOB_ID} of a salloc or sbatch), if any. */
    static Optional<String> jobId(Map<String, String> env) {
        return Optional.ofNullable(env.get("SLURM_JOB_ID")).filter(j -> j.matches("\\d+"));
    }

    /** How often Slurm has restarted (requeued) the batch job this runs in ({@code SLURM_RESTART_COUNT}), when it says. */
    static Optional<String> restartCount(Map<String, String> env) {
        return Optional.ofNullable(env.get("SLURM_RESTART_COUNT")).filter(v -> v.matches("\\d{1,9}"));
    }

    /** That allocation's nodes as Slurm writes a host list ({@code SLURM_JOB_NODELIST}), if given. */
    static Optional<String> nodeList(Map<String, String> env) {
        return Optional.ofNullable(env.get("SLURM_JOB_NODELIST"));
    }
}
