package org.runjob.plan;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

import org.runjob.spec.JobSpec;

/**
 * One node of a plan: where it is, its node rank, the devices its workers see, and its workers.
 *
 * @param host          SSH address; empty for a local node without one
 * @param sshPort       empty: the ssh config's port, else 22
 * @param visibleDevices CUDA_VISIBLE_DEVICES for its workers, or {@link #ALL_FOUND_AT_LAUNCH}
 */
public record NodePlan(
        String name,
        int nodeRank,
        boolean local,
        Optional<String> host,
        OptionalInt sshPort,
        Optional<String> user,
        String visibleDevices,
        String workdir,
        List<JobSpec.ShippedFile> files,
        List<WorkerLaunch> workers) {

    /** The value shown for a {@code gpus: all} node that has not been probed yet (a dry run). */
    public static final String ALL_FOUND_AT_LAUNCH = "<all GPUs found at launch>";

    public NodePlan {
        Objects.requireNonNull(name, "name");
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
