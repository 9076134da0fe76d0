package org.runjob.spec;

/**
 * Who decides which GPUs a node's workers use; its backend says ({@code node.Backend#gpus}).
 */
public enum GpuAuthority {

    /**
     * runjob: each node's agent probes its GPUs, the job file's list, {@code all} or
     * {@code {count: N}} picks, and the run's agents lease what it uses.
     */
    PROBED_AND_LEASED,

    /**
     * The scheduler (Slurm) gives each node's step its GPUs: a list in the job file is a count, and
     * the indices are those the step was given; runjob neither probes nor leases.
     */
    SCHEDULER_ASSIGNED
}
