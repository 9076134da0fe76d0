package org.runjob.runtime;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A runtime that speaks the docker command line and keeps its containers under a daemon or
 * conmon: {@code RUNTIME run --label runjob.run=RUN --label runjob.rank=R --label runjob.agent=A
 * --label runjob.token=T --network host --pid host --ipc host [GPUs] -v DIR:DIR -w DIR
 * [-v MOUNT]... [-e NAME]... OPTIONS... IMAGE ARGV...}: host network (the rendezvous is the
 * host's), the host's process ids (the agent stops, watches and takes the stacks of the ranks'
 * processes as it does outside; a {@code --pid} in the options replaces it), the host's IPC
 * namespace (NCCL's shared memory; an {@code --shm-size} or {@code --ipc} in the options replaces
 * it), the run's directory at its own path as the working directory, each variable passed by name
 * only (its value comes from the client's environment, so no value shows on a command line and
 * nothing else of the agent's environment goes in), GPUs by {@link #gpuOptions} with
 * {@code CUDA_VISIBLE_DEVICES} set to the indices the container sees (0..n-1). No {@code --rm}:
 * once the client ends, the agent reads the program's own exit code and end time from the
 * {@link #store}, then removes the container by its token's label.
 */
public abstract class DockerCli implements WorkerRuntime {

    /** The label every container of a run carries, with the run id as its value. */
    public static final String RUN_LABEL = "runjob.run";
    /** The label naming one worker start: its process-tree token. */
    public static final String TOKEN_LABEL = "runjob.token";
    /** The label naming the agent that started it: what its watchdog removes. */
    public static final String AGENT_LABEL = "runjob.agent";

    /** The options that give the container the host's GPUs {@code gpus}. */
    protected abstract List<String> gpuOptions(List<String> gpus);

    /** The options that keep the container in the cgroup of the scheduler's step {@code s} runs in; none by default. */
    protected List<String> cgroupOptions(Container c, WorkerStartArgs s) {
        return List.of();
    }

    @Override
    public List<String> argv(Container c, WorkerStartArgs s) {
        List<String> out = new ArrayList<>(List.of(program(), "run", "--label", RUN_LABEL + "=" + s.run(), "--label", "runjob.rank=" + s.rank(),
                "--label", AGENT_LABEL + "=" + s.agent(), "--label", TOKEN_LABEL + "=" + s.token(), "--network", "host"));
        if (!c.hasOption("--pid")) {
            out.addAll(List.of("--pid", "host"));
        }
        if (!c.hasOption("--shm-size", "--ipc")) {
            out.addAll(List.of("--ipc", "host"));
        }
        if (!s.gpus().isEmpty()) {
            out.addAll(gpuOptions(s.gpus()));
        }
        out.addAll(cgroupOptions(c, s));
        out.addAll(List.of("-v", s.dir() + ":" + s.dir(), "-w", s.dir()));
        s.more().forEach(m -> out.addAll(List.of("-v", m + ":" + m)));
        c.mounts().forEach(m -> out.addAll(List.of("-v", m)));
        for (String name : s.names()) {
            boolean gpus = name.equals(WorkerStartArgs.CUDA_VISIBLE_DEVICES) && !s.gpus().isEmpty();
            out.addAll(List.of("-e", gpus ? name + "=" + s.gpusInside() : name));
        }
        out.addAll(c.options());
        out.add(c.image());
        out.addAll(s.argv());
        return out;
    }

    @Override
    public ImageCheck imageCheck(String image) {
        return new ImageCheck.Inspect(List.of(program(), "image", "inspect", "--format", "{{.Id}} {{.Digest}}", image));
    }

    @Override
    public Optional<ContainerStore> store() {
        return Optional.of(new ContainerStore(program()));
    }
}
