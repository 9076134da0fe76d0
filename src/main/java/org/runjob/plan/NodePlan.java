package org.runjob.plan;

import java.util.List;
import java.util.Objects;

import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeAddress;

/**
 * One node of a plan: where it is, its node rank, the devices its workers see, and its workers.
 *
 * @param visibleDevices CUDA_VISIBLE_DEVICES for its workers, or {@link #ALL_FOUND_AT_LAUNCH}
 */
public record NodePlan(
        String name,
        int nodeRank,
        NodeAddress address,
        String visibleDevices,
        String workdir,
        List<JobSpec.ShippedFile> files,
        List<WorkerLaunch> workers) {

    /** The value shown for a {@code gpus: all} node that has not been probed yet (a dry run). */
    public static final String ALL_FOUND_AT_LAUNCH = "<all GPUs found at launch>";

    /** The value shown for a {@code gpus: {count: N}} node before launch. */
    public static String picked(int count) {
        return "<" + count + " free GPU" + (count == 1 ? "" : "s") + " picked at launch>";
    }

    /** The value shown for a node's GPUs before the scheduler gave them (a dry run): it chooses which. */
    public static final String GIVEN_BY_SCHEDULER = "<the GPUs the scheduler gives the node>";

    public NodePlan {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(visibleDevices, "visibleDevices");
        Objects.requireNonNull(workdir, "workdir");
        files = List.copyOf(files);
        workers = List.copyOf(workers);
        if (workers.isEmpty()) {
            throw new IllegalArgumentException("node " + name + " has no workers");
        }
    }

    /** The global ranks on this node, in order. */
    public List<Integer> ranks() {
        return workers.stream().map(WorkerLaunch::rank).toList();
    }
}
