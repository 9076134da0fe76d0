package org.runjob.runtime;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How a worker runs inside a container: one class per runtime, registered by one line in
 * {@code META-INF/services/org.runjob.runtime.WorkerRuntime} and found by the name a job file
 * gives as {@code container.runtime} ({@link WorkerRuntimes}). A runtime only makes command lines
 * and variables: the dry run shows {@link #argv}, the agent runs it and the commands of
 * {@link #imageCheck} and {@link #store}.
 */
public interface WorkerRuntime {

    /** The name a job file gives, lower case. */
    String name();

    /** The program the agent finds on the node's {@code PATH}: the first word of {@link #argv}. */
    default String program() {
        return name();
    }

    /** The command that runs {@code start}'s worker argv in {@code container}. */
    List<String> argv(Container container, WorkerStartArgs start);

    /**
     * Variables the runtime's client needs besides the worker's own, made from the worker's
     * environment {@code env}: for a runtime that clears the environment, each name in
     * {@code names} as the form it passes in. None by default: {@link #argv} passes the names.
     */
    default Map<String, String> clientEnvironment(Collection<String> names, Map<String, String> env) {
        return Map.of();
    }

    /** How a node shows it has {@code image} before a worker starts. */
    ImageCheck imageCheck(String image);

    /** Why the job file's {@code image} can never start through this runtime, said as a fix; empty when it can. */
    default Optional<String> imageProblem(String image) {
        return Optional.empty();
    }

    /**
     * The runtime's own record of containers, present where a container outlives its client (a
     * daemon, conmon): the agent reads a worker's exit from it and removes what a run leaves by
     * label. Empty where a worker is the client's own process tree, which the agent stops as it
     * stops any worker.
     */
    default Optional<ContainerStore> store() {
        return Optional.empty();
    }
}
