package org.runjob.testbackend;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.runjob.node.Backend;
import org.runjob.node.BatchQueue;
import org.runjob.node.Cluster;
import org.runjob.node.LocalCluster;
import org.runjob.spec.BackendSpec;
import org.runjob.spec.GpuAuthority;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;

/**
 * {@code backend: procs}, a backend that lives only in the test sources and is registered by one
 * line in {@code META-INF/services}: every node is a process on this machine, reached as a local
 * node is, though runjob sees a node address of the backend's own kind. It proves that a backend
 * brings its block, its address kind, its rules and its page with no edit elsewhere.
 */
public final class ProcsBackend implements Backend {

    private final ProcsJobFile jobFile = new ProcsJobFile();

    @Override
    public BackendSpec jobFile() {
        return jobFile;
    }

    @Override
    public Cluster open(JobSpec spec, Map<String, String> env, Consumer<String> progress, BooleanSupplier interrupted) {
        progress.accept("procs: " + spec.settings(ProcsSettings.class).label() + ": " + spec.nodes().size() + " processes");
        return new LocalCluster(env);
    }

    @Override
    public List<String> notes(JobSpec spec) {
        return List.of("procs " + spec.settings(ProcsSettings.class).label() + ": every node is a process on this machine");
    }

    @Override
    public DryRun dryRun(JobSpec spec) {
        return new DryRun("one agent process per node, on this machine",
                spec.nodes().stream().map(NodeSpec::name).map(n -> "agent for " + n).toList());
    }

    /** A queue of its own ({@link ProcsQueue}): {@code runjob submit} of a procs job is a process started at once. */
    @Override
    public Optional<BatchQueue> queue() {
        return Optional.of(new ProcsQueue());
    }

    @Override
    public GpuAuthority gpus() {
        return GpuAuthority.PROBED_AND_LEASED;
    }
}
