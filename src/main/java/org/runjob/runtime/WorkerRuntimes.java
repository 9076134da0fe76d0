package org.runjob.runtime;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.stream.Collectors;

/**
 * The worker runtimes: the built-ins, one line each in {@link #BUILT_IN}, then each runtime a jar
 * on the class path registers by a line in {@code META-INF/services/org.runjob.runtime.WorkerRuntime}
 * (a name already taken is skipped, and so is a line whose class cannot be loaded).
 */
public final class WorkerRuntimes {

    /** The runtime a container without {@code runtime:} uses. */
    public static final String DEFAULT = "podman";

    private static final List<WorkerRuntime> BUILT_IN = List.of(
            new Podman(),
            new Docker(),
            new Apptainer(),
            new Enroot());

    private static final List<WorkerRuntime> ALL = all(BUILT_IN);

    private static List<WorkerRuntime> all(List<WorkerRuntime> builtIn) {
        Map<String, WorkerRuntime> out = new LinkedHashMap<>();
        builtIn.forEach(r -> out.put(r.name(), r));
        Iterator<WorkerRuntime> found = ServiceLoader.load(WorkerRuntime.class, WorkerRuntimes.class.getClassLoader()).iterator();
        while (true) {
            try {
                if (!found.hasNext()) {
                    break;
                }
                WorkerRuntime r = found.next();
                out.putIfAbsent(r.name(), r);
            } catch (ServiceConfigurationError e) {
                // a service line whose class this jar lacks: that runtime is unknown here, the others are not
            }
        }
        return List.copyOf(out.values());
    }

    private WorkerRuntimes() {
    }

    /** Every registered runtime. */
    public static List<WorkerRuntime> all() {
        return ALL;
    }

    /** The runtime named {@code name}, if one is registered. */
    public static Optional<WorkerRuntime> find(String name) {
        return ALL.stream().filter(r -> r.name().equals(name)).findFirst();
    }

    /** The runtime named {@code name}; a name that passed the job file's check always has one. */
    public static WorkerRuntime named(String name) {
        return find(name).orElseThrow(() -> new IllegalArgumentException("unknown container runtime " + name + ": " + names()));
    }

    /** The registered names as a sentence: {@code podman, docker, apptainer or enroot}. */
    public static String names() {
        List<String> n = ALL.stream().map(WorkerRuntime::name).toList();
        if (n.size() < 2) {
            return String.join("", n);
        }
        return n.subList(0, n.size() - 1).stream().collect(Collectors.joining(", ")) + " or " + n.get(n.size() - 1);
    }
}
