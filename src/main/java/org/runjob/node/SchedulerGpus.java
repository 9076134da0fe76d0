package org.runjob.node;

import java.util.List;

import org.runjob.protocol.GpuInventory;
import org.runjob.protocol.NodeFacts;

/**
 * For a backend whose scheduler gives each node's agent its GPUs ({@link Backend#schedulerGpus}):
 * which variables the agent reports besides its CUDA_VISIBLE_DEVICES, and how those facts become
 * the node's inventory. runjob neither probes nor leases such GPUs.
 */
public interface SchedulerGpus {

    /** The variables of its environment each agent reports in HELLO ({@code agent --report NAME}). */
    List<String> variables();

    /** The GPUs the scheduler gave the node's agent, by CUDA_VISIBLE_DEVICES index (what its workers get). */
    GpuInventory inventory(NodeFacts facts);

    /** What preflight's GPU cell says of the GPUs given: "given by Slurm: CUDA_VISIBLE_DEVICES=0,1 (SLURM_STEP_GPUS=2,3)". */
    String describe(NodeFacts facts);

    /** What it says when the node was given none: "Slurm gave the step no GPUs". */
    String noneGiven();
}
