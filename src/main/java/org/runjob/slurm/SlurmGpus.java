package org.runjob.slurm;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.runjob.node.SchedulerGpus;
import org.runjob.protocol.Gpu;
import org.runjob.protocol.GpuInventory;
import org.runjob.protocol.NodeFacts;

/**
 * The GPUs Slurm gives each agent's step: its CUDA_VISIBLE_DEVICES, and SLURM_STEP_GPUS, the
 * physical indices of those GPUs. The model and memory are not probed: Slurm owns them.
 */
final class SlurmGpus implements SchedulerGpus {

    static final SlurmGpus INSTANCE = new SlurmGpus();

    private static final String STEP_GPUS = "SLURM_STEP_GPUS";

    private SlurmGpus() {
    }

    @Override
    public List<String> variables() {
        return List.of(STEP_GPUS);
    }

    @Override
    public GpuInventory inventory(NodeFacts facts) {
        String visible = facts.get(NodeFacts.VISIBLE_DEVICES).orElse("");
        String[] physical = facts.variableValue(STEP_GPUS).orElse("").split(",");
        List<Gpu> gpus = new ArrayList<>();
        String[] indices = visible.isBlank() ? new String[0] : visible.split(",");
        for (int i = 0; i < indices.length; i++) {
            if (!indices[i].trim().matches("\\d+")) {
                return GpuInventory.none("Slurm set CUDA_VISIBLE_DEVICES=" + visible + ", not indices");
            }
            String phys = i < physical.length && !physical[i].isBlank() ? physical[i].trim() : "?";
            gpus.add(new Gpu(Integer.parseInt(indices[i].trim()), "GPU given by Slurm (physical " + phys + ")", -1, -1, 0, 0, "slurm:" + phys));
        }
        return new GpuInventory(gpus, 0, Optional.empty());
    }

    @Override
    public String describe(NodeFacts facts) {
        return "given by Slurm: CUDA_VISIBLE_DEVICES=" + facts.get(NodeFacts.VISIBLE_DEVICES).orElse("") + " (SLURM_STEP_GPUS="
                + facts.variableValue(STEP_GPUS).orElse("") + ")";
    }

    @Override
    public String noneGiven() {
        return "Slurm gave the step no GPUs";
    }
}
