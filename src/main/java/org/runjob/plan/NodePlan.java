package org.runjob.plan;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

import org.runjob.protocol.ContainerStart;
import org.runjob.runtime.WorkerStartArgs;
import org.runjob.spec.EnvironmentSpec;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeAddress;

/**
 * One node of a plan: where it is, its node rank, the devices its workers see, and its workers.
 *
 * @param visibleDevices CUDA_VISIBLE_DEVICES for its workers, or {@link #ALL_FOUND_AT_LAUNCH}
 * @param environment    the node's {@code environment:} as written (the dry run shows it)
 * @param activated      the variables its activation set (their values are in each worker's env)
 * @param unset          variables its activation removed: the workers do not get them
 */
public record NodePlan(
        String name,
        int nodeRank,
        NodeAddress address,
        String visibleDevices,
        String workdir,
        List<JobSpec.ShippedFile> files,
        List<WorkerLaunch> workers,
        EnvironmentSpec environment,
        List<String> activated,
        List<String> unset) {

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
        Objects.requireNonNull(environment, "environment");
        activated = List.copyOf(activated);
        unset = List.copyOf(unset);
        if (workers.isEmpty()) {
            throw new IllegalArgumentException("node " + name + " has no workers");
        }
    }

    /** The container the node's workers run in, when its environment names one. */
    public Optional<ContainerStart> container() {
        return container(environment);
    }

    /** The container {@code e} names, as the agent is told to run it. */
    public static Optional<ContainerStart> container(EnvironmentSpec e) {
        return e.container().map(c -> new ContainerStart(c.runtime(), c.image(), c.mounts(), c.options()));
    }

    /**
     * The command a worker of this node runs, as the dry run shows it: its argv, or the container's
     * command line around it (the agent's id and the start's token shown as placeholders).
     */
    public List<String> command(WorkerLaunch w) {
        Optional<ContainerStart> c = container();
        if (c.isEmpty()) {
            return w.argv();
        }
        List<String> gpus = WorkerStartArgs.gpusOf(w.env().getOrDefault(WorkerStartArgs.CUDA_VISIBLE_DEVICES, ""));
        return c.get().argv(new WorkerStartArgs(workdir, List.of(), List.copyOf(w.env().keySet()), gpus,
                w.env().getOrDefault("RUNJOB_RUN_ID", "RUN"), w.rank(), "<agent>", "<start>", w.argv()));
    }

    /** The global ranks on this node, in order. */
    public List<Integer> ranks() {
        return workers.stream().map(WorkerLaunch::rank).toList();
    }
}
