package org.runjob.transport;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.runjob.node.Backend;
import org.runjob.node.Cluster;
import org.runjob.node.LocalCluster;
import org.runjob.node.MixedCluster;
import org.runjob.node.NodeException;
import org.runjob.spec.BackendSpec;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeAddress;

/**
 * {@code backend: ssh} (the default): each node is an SSH login with the job's {@code ssh:}
 * settings, or this machine for {@code local: true} nodes; runjob's agents probe and lease GPUs.
 */
public final class SshBackend implements Backend {

    private final SshJobFile jobFile = new SshJobFile();

    @Override
    public BackendSpec jobFile() {
        return jobFile;
    }

    @Override
    public Cluster open(JobSpec spec, Map<String, String> env, Consumer<String> progress, BooleanSupplier interrupted) {
        return new MixedCluster(Map.of(NodeAddress.Local.class, new LocalCluster(env), NodeAddress.Ssh.class, new SshCluster(spec.ssh(), env)));
    }

    /** The job as written; its SSH settings, when a node is reached over SSH, are checked once here, not once per node. */
    @Override
    public JobSpec resolve(JobSpec spec, Map<String, String> env) throws NodeException {
        if (spec.nodes().stream().anyMatch(n -> n.address() instanceof NodeAddress.Ssh)) {
            Optional<String> problem = SshConnector.settingsProblem(spec.ssh(), env);
            if (problem.isPresent()) {
                throw new NodeException(problem.get());
            }
        }
        return spec;
    }

    @Override
    public List<String> notes(JobSpec spec) {
        return List.of();
    }

    @Override
    public DryRun dryRun(JobSpec spec) {
        return DryRun.none();
    }

}
