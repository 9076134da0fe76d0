package org.runjob.spec;

import java.util.List;
import java.util.Map;

/**
 * Variables a backend adds to each worker's environment from its place in the run, beside the
 * torchrun ones: a scheduler's per-task variables, so code that reads them (Lightning's
 * {@code SLURMEnvironment}, submitit) sees the worker's own rank, not the one task of its node's step.
 */
@FunctionalInterface
public interface WorkerVariables {

    /** Adds nothing. */
    WorkerVariables NONE = (worker, perNode) -> Map.of();

    /**
     * @param worker  the worker's torchrun variables (RANK, LOCAL_RANK, NODE_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, ...)
     * @param perNode each node's worker count, in node-rank order
     * @return the variables to add
     */
    Map<String, String> of(Map<String, String> worker, List<Integer> perNode);
}
