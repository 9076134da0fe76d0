package org.runjob.protocol;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * How a node's workers run inside a container: the runtime ({@code podman}, {@code docker} or
 * {@code apptainer}), the image, more mounts and more options. {@link #argv} is the one place the
 * runtime's command line is made: the dry run shows it, the agent runs it.
 *
 * <p>podman and docker: {@code RUNTIME run --label runjob.run=RUN --label runjob.rank=R
 * --label runjob.agent=A --label runjob.token=T --network host --pid host --ipc host [GPUs] -v
 * DIR:DIR -w DIR [-v MOUNT]... [-e NAME]... OPTIONS... IMAGE ARGV...}: host network (the
 * rendezvous is the host's), the host's process ids (the agent stops, watches and takes the
 * stacks of the ranks' processes as it does outside; a {@code --pid} in the options replaces it),
 * the host's IPC namespace (NCCL's shared memory; an {@code --shm-size} or {@code --ipc} in the
 * options replaces it), the run's directory at its own path as the working directory, each
 * variable passed by name only (its value comes from the runtime client's environment, so no value
 * shows on a command line and nothing else of the agent's environment goes in), GPUs by the
 * runtime's own means with {@code CUDA_VISIBLE_DEVICES} set to the indices the container sees
 * (0..n-1). No {@code --rm}: once the client ends, the agent reads the program's own exit code
 * and end time from the runtime's record, then removes the container by its token's label (the
 * agent's watchdog removes what an agent's death leaves). apptainer: {@code apptainer exec --nv --cleanenv --bind DIR --pwd DIR [--bind
 * MOUNT]... OPTIONS... IMAGE ARGV...}, its variables as {@code APPTAINERENV_NAME}.
 */
public record ContainerStart(String runtime, String image, List<String> mounts, List<String> options) {

    /** The label every container of a run carries, with the run id as its value. */
    public static final String RUN_LABEL = "runjob.run";
    /** The label naming one worker start: its process-tree token. */
    public static final String TOKEN_LABEL = "runjob.token";
    /** The label naming the agent that started it: what its watchdog removes. */
    public static final String AGENT_LABEL = "runjob.agent";

    public ContainerStart {
        Objects.requireNonNull(runtime, "runtime");
        Objects.requireNonNull(image, "image");
        mounts = List.copyOf(mounts);
        options = List.copyOf(options);
    }

    /** True for a runtime whose containers run under a daemon or conmon, found and removed by label. */
    public boolean labelled() {
        return !runtime.equals("apptainer");
    }

    /**
     * The command that runs {@code argv} in a container.
     *
     * @param dir      the run's directory on the node, mounted at its own path and the working directory
     * @param more     more directories mounted at their own path (the stack hook's)
     * @param names    the variables passed in by name
     * @param gpus     the host's GPU indices the worker uses (CUDA_VISIBLE_DEVICES outside); empty: none
     * @param run      the run id, for the run label
     * @param rank     the worker's rank
     * @param agent    the agent's id on its node
     * @param token    the worker's process-tree token
     */
    public List<String> argv(String dir, Collection<String> more, Collection<String> names, List<String> gpus, String run, int rank,
                             String agent, String token, List<String> argv) {
        List<String> out = new ArrayList<>();
        if (!labelled()) {
            out.addAll(List.of(runtime, "exec", "--nv", "--cleanenv", "--bind", dir, "--pwd", dir));
            more.forEach(m -> out.addAll(List.of("--bind", m)));
            mounts.forEach(m -> out.addAll(List.of("--bind", m)));
            out.addAll(options);
            out.add(image);
            out.addAll(argv);
            return out;
        }
        out.addAll(List.of(runtime, "run", "--label", RUN_LABEL + "=" + run, "--label", "runjob.rank=" + rank,
                "--label", AGENT_LABEL + "=" + agent, "--label", TOKEN_LABEL + "=" + token, "--network", "host"));
        if (options.stream().noneMatch(o -> o.startsWith("--pid"))) {
            out.addAll(List.of("--pid", "host"));
        }
        if (options.stream().noneMatch(o -> o.startsWith("--shm-size") || o.startsWith("--ipc"))) {
            out.addAll(List.of("--ipc", "host"));
        }
        if (!gpus.isEmpty()) {
            if (runtime.equals("docker")) {
                out.addAll(List.of("--gpus", "device=" + String.join(",", gpus)));
            } else {
                gpus.forEach(g -> out.addAll(List.of("--device", "nvidia.com/gpu=" + g)));
            }
        }
        out.addAll(List.of("-v", dir + ":" + dir, "-w", dir));
        more.forEach(m -> out.addAll(List.of("-v", m + ":" + m)));
        mounts.forEach(m -> out.addAll(List.of("-v", m)));
        for (String name : names) {
            out.addAll(List.of("-e", name.equals(CUDA_VISIBLE_DEVICES) && !gpus.isEmpty() ? name + "=" + inside(gpus.size()) : name));
        }
        out.addAll(options);
        out.add(image);
        out.addAll(argv);
        return out;
    }

    static final String CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES";

    /** CUDA_VISIBLE_DEVICES inside a container given {@code n} GPUs: they are numbered from 0 there. */
    static String inside(int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(Integer.toString(i));
        }
        return String.join(",", out);
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
