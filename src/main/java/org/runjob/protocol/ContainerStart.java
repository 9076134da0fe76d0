package org.runjob.protocol;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.List;
import java.util.Objects;

import org.runjob.runtime.Container;
import org.runjob.runtime.WorkerRuntime;
import org.runjob.runtime.WorkerRuntimes;
import org.runjob.runtime.WorkerStartArgs;

/**
 * How a node's workers run inside a container, as the agent is told: the runtime's name (one of
 * {@link WorkerRuntimes}), the image, more mounts and more options. The runtime makes the command
 * line ({@link #argv}): the dry run shows it, the agent runs it.
 */
public record ContainerStart(String runtime, String image, List<String> mounts, List<String> options) {

    public ContainerStart {
        Objects.requireNonNull(runtime, "runtime");
        Objects.requireNonNull(image, "image");
        mounts = List.copyOf(mounts);
        options = List.copyOf(options);
    }

    /** The runtime this start names. */
    public WorkerRuntime workerRuntime() {
        return WorkerRuntimes.named(runtime);
    }

    /** What the job file asks of the container. */
    public Container container() {
        return new Container(image, mounts, options);
    }

    /** The command that runs the worker {@code start} describes in this container. */
    public List<String> argv(WorkerStartArgs start) {
        return workerRuntime().argv(container(), start);
    }

    void encode(DataOutputStream out) throws IOException {
        Wire.string(out, runtime);
        Wire.string(out, image);
        Wire.list(out, mounts);
        Wire.list(out, options);
    }

    static ContainerStart decode(DataInputStream in) throws IOException {
        return new ContainerStart(Wire.string(in), Wire.string(in), Wire.list(in), Wire.list(in));
    }
}
