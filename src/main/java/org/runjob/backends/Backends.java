package org.runjob.backends;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

import org.runjob.hosted.RelayCluster;
import org.runjob.node.Backend;
import org.runjob.node.Cluster;
import org.runjob.protocol.HostedRun;
import org.runjob.slurm.SlurmBackend;
import org.runjob.spec.JobSpec;
import org.runjob.transport.SshBackend;

/**
 * The one registry of backends, by the job file's {@code backend:} name; the only code that
 * imports a backend's package. A new backend is one line here.
 */
public final class Backends {

    private static final Map<String, Backend> BY_NAME = List.<Backend>of(
            new SshBackend(),
            new SlurmBackend()
    ).stream().collect(Collectors.toUnmodifiableMap(Backend::name, Function.identity()));

    private Backends() {
    }

    /** How a submitted run's coordinator reaches its nodes: through the node hosts {@code runjob submit} left there. */
    public static Cluster hosted(HostedRun run) {
        return new RelayCluster(run);
    }

    /** The backend of that name, if there is one. */
    public static Optional<Backend> named(String name) {
        return Optional.ofNullable(BY_NAME.get(name));
    }

    /** The backend {@code spec} names (validation has checked the name). */
    public static Backend of(JobSpec spec) {
        Backend b = BY_NAME.get(spec.backend());
        if (b == null) {
            throw new IllegalArgumentException("no backend named " + spec.backend());
        }
        return b;
    }
}
