package org.runjob.backends;

import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;

import org.runjob.hosted.RelayCluster;
import org.runjob.node.Backend;
import org.runjob.node.Cluster;
import org.runjob.protocol.HostedRun;
import org.runjob.spec.BackendSpecs;
import org.runjob.spec.JobSpec;

/**
 * The one registry of backends, by the job file's {@code backend:} name. Backends register
 * themselves, one line each in {@code META-INF/services/org.runjob.node.Backend} (runjob's own:
 * ssh, then slurm); the registry finds every one on the class path, in class-path order.
 */
public final class Backends {

    private static final List<Backend> ALL = ServiceLoader.load(Backend.class, Backends.class.getClassLoader()).stream()
            .map(ServiceLoader.Provider::get).toList();

    private static final BackendSpecs SPECS = new BackendSpecs(ALL.stream().map(Backend::jobFile).toList());

    private Backends() {
    }

    /** Every registered backend, in registration order. */
    public static List<Backend> all() {
        return ALL;
    }

    /** Their parts of the job file, for loading a job ({@code spec.SpecLoader}). */
    public static BackendSpecs specs() {
        return SPECS;
    }

    /** How a submitted run's coordinator reaches its nodes: through the node hosts {@code runjob submit} left there. */
    public static Cluster hosted(HostedRun run) {
        return new RelayCluster(run);
    }

    /** The backend of that name, if there is one. */
    public static Optional<Backend> named(String name) {
        return ALL.stream().filter(b -> b.name().equals(name)).findFirst();
    }

    /** The backend {@code spec} names (validation has checked the name). */
    public static Backend of(JobSpec spec) {
        return named(spec.backend().name()).orElseThrow(() -> new IllegalArgumentException("no backend named " + spec.backend().name()));
    }
}
