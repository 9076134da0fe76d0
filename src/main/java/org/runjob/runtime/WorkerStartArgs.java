package org.runjob.runtime;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One worker's start as a runtime sees it.
 *
 * @param dir   the run's directory on the node: mounted at its own path and the working directory
 * @param more  more directories mounted at their own path (the stack hook's)
 * @param names the variables passed in, by name (their values are the client's)
 * @param gpus  the host's GPU indices the worker uses; empty: none
 * @param run   the run id, for the run label
 * @param rank  the worker's rank
 * @param agent the agent's id on its node
 * @param token the worker's process-tree token
 * @param argv  the worker's own command line
 * @param step  the cgroup of the scheduler's step the agent runs in, which the worker stays under;
 *              empty outside a scheduler (and in the dry run)
 */
public record WorkerStartArgs(String dir, List<String> more, List<String> names, List<String> gpus, String run, int rank,
                              String agent, String token, List<String> argv, Optional<Cgroup> step) {

    public WorkerStartArgs {
        Objects.requireNonNull(dir, "dir");
        more = List.copyOf(more);
        names = List.copyOf(names);
        gpus = List.copyOf(gpus);
        Objects.requireNonNull(run, "run");
        Objects.requireNonNull(agent, "agent");
        Objects.requireNonNull(token, "token");
        argv = List.copyOf(argv);
        Objects.requireNonNull(step, "step");
    }

    /** A start outside any scheduler's step. */
    public WorkerStartArgs(String dir, List<String> more, List<String> names, List<String> gpus, String run, int rank, String agent,
                           String token, List<String> argv) {
        this(dir, more, names, gpus, run, rank, agent, token, argv, Optional.empty());
    }

    /** The variable naming the GPUs a worker sees. */
    public static final String CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES";

    /** The GPU indices a {@code CUDA_VISIBLE_DEVICES} value lists; none for any other value (empty, or a dry run's placeholder). */
    public static List<String> gpusOf(String visible) {
        return visible.matches("\\d+(,\\d+)*") ? List.of(visible.split(",")) : List.of();
    }

    /** {@code CUDA_VISIBLE_DEVICES} inside a container given the worker's GPUs: they are numbered from 0 there. */
    public String gpusInside() {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < gpus.size(); i++) {
            out.add(Integer.toString(i));
        }
        return String.join(",", out);
    }
}
