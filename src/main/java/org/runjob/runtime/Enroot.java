package org.runjob.runtime;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * enroot, the runtime under Slurm's pyxis: {@code enroot start [--env NAME]... --env
 * NVIDIA_VISIBLE_DEVICES [--env CUDA_VISIBLE_DEVICES=0..n-1] --mount DIR:DIR:none:x-create=dir,rbind
 * [--mount MORE...]... [--mount SRC:DST:none:x-create=auto,rbind[,OPTS]]... OPTIONS... IMAGE sh -c
 * 'cd -- "$1" && shift && exec "$@"' runjob-cd DIR ARGV...}: a job file's mount
 * {@code SRC:DST[:OPTS]} becomes enroot's colon-separated fstab line, as pyxis makes it. enroot has no daemon: the worker is the client's own process tree, so it
 * stays in the cgroup of the scheduler's step and the agent stops it as any worker. Each variable
 * goes in by name (enroot takes its value from the client's environment); the GPUs by
 * {@code NVIDIA_VISIBLE_DEVICES}, which enroot's NVIDIA hook reads from the client's environment
 * ({@code void}: none), and are numbered from 0 inside. enroot starts in the home directory, so a
 * shell of the image's changes to the run's directory and execs the worker (its path and argv are
 * arguments, never shell text). The image is a squashfs file ({@code enroot import} makes one) or
 * the name of a container {@code enroot create} made.
 */
public final class Enroot implements WorkerRuntime {

    /** The variable enroot's NVIDIA hook reads for the GPUs to give the container. */
    static final String NVIDIA_VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES";

    @Override
    public String name() {
        return "enroot";
    }

    @Override
    public List<String> argv(Container c, WorkerStartArgs s) {
        List<String> out = new ArrayList<>(List.of(program(), "start"));
        for (String name : s.names()) {
            boolean gpus = name.equals(WorkerStartArgs.CUDA_VISIBLE_DEVICES) && !s.gpus().isEmpty();
            out.addAll(List.of("--env", gpus ? name + "=" + s.gpusInside() : name));
        }
        out.addAll(List.of("--env", NVIDIA_VISIBLE_DEVICES));
        out.addAll(List.of("--mount", bind(s.dir())));
        s.more().forEach(m -> out.addAll(List.of("--mount", bind(m))));
        c.mounts().forEach(m -> out.addAll(List.of("--mount", mount(m))));
        out.addAll(c.options());
        out.add(c.image());
        out.addAll(List.of("sh", "-c", "cd -- \"$1\" && shift && exec \"$@\"", "runjob-cd", s.dir()));
        out.addAll(s.argv());
        return out;
    }

    /**
     * {@code NVIDIA_VISIBLE_DEVICES}: the host's indices of the worker's GPUs (its
     * {@code CUDA_VISIBLE_DEVICES}), or {@code void} for none, so an image that asks for every GPU
     * gives a worker without one none.
     */
    @Override
    public Map<String, String> clientEnvironment(Collection<String> names, Map<String, String> env) {
        List<String> gpus = WorkerStartArgs.gpusOf(env.getOrDefault(WorkerStartArgs.CUDA_VISIBLE_DEVICES, ""));
        return Map.of(NVIDIA_VISIBLE_DEVICES, gpus.isEmpty() ? "void" : String.join(",", gpus));
    }

    @Override
    public ImageCheck imageCheck(String image) {
        return image.contains("/") || image.endsWith(".sqsh") ? new ImageCheck.File(image) : new ImageCheck.Unchecked();
    }

    @Override
    public Optional<String> imageProblem(String image) {
        return image.contains("://")
                ? Optional.of("enroot starts a squashfs file or a container it created, not '" + image + "': make one with"
                        + " enroot import -o IMAGE.sqsh " + image + " where the nodes read it, and name that file")
                : Optional.empty();
    }

    /** A directory mounted at its own path, made where the image lacks it. */
    static String bind(String dir) {
        return fstab(dir) + ":" + fstab(dir) + ":none:x-create=dir,rbind";
    }

    /** A job file's {@code SRC:DST[:OPTS]} (the schema's form) as enroot's: a bind mount, its target made as the source is. */
    static String mount(String m) {
        String[] parts = m.split(":", 3);
        String dst = parts.length > 1 ? parts[1] : parts[0];
        return fstab(parts[0]) + ":" + fstab(dst) + ":none:x-create=auto,rbind" + (parts.length > 2 ? "," + parts[2] : "");
    }

    /**
     * A path in enroot's colon-separated fstab form: whitespace and backslashes as fstab's octal
     * escapes. A path with a colon cannot be said in that form.
     */
    private static String fstab(String path) {
        StringBuilder b = new StringBuilder();
        for (char ch : path.toCharArray()) {
            switch (ch) {
                case ' ' -> b.append("\\040");
                case '\t' -> b.append("\\011");
                case '\n' -> b.append("\\012");
                case '\\' -> b.append("\\134");
                default -> b.append(ch);
            }
        }
        return b.toString();
    }
}
