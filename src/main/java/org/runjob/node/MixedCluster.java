package org.runjob.node;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.runjob.spec.NodeAddress;
import org.runjob.spec.NodeSpec;

/**
 * A job whose nodes are reached in more than one way (local and SSH nodes): each node goes to the
 * cluster of its address's kind. Closing it closes them all; its run handle is the first one's
 * that has one.
 */
public final class MixedCluster implements Cluster {

    private final Map<Class<? extends NodeAddress>, Cluster> byKind;

    public MixedCluster(Map<Class<? extends NodeAddress>, Cluster> byKind) {
        this.byKind = Map.copyOf(byKind);
    }

    @Override
    public NodeAccess node(NodeSpec node) {
        Cluster c = byKind.get(node.address().getClass());
        if (c == null) {
            throw new IllegalArgumentException("node " + node.name() + ": no way to reach " + node.address().describe());
        }
        return c.node(node);
    }

    @Override
    public Optional<RunHandle> handle() {
        return byKind.values().stream().map(Cluster::handle).flatMap(Optional::stream).findFirst();
    }

    @Override
    public void ended(int exitCode) {
        byKind.values().forEach(c -> c.ended(exitCode));
    }

    @Override
    public Optional<SchedulerStop> stoppedBy() {
        return byKind.values().stream().map(Cluster::stoppedBy).flatMap(Optional::stream).findFirst();
    }

    @Override
    public Optional<String> keepOff(Set<String> machines) {
        return byKind.values().stream().map(c -> c.keepOff(machines)).flatMap(Optional::stream).findFirst();
    }

    @Override
    public Optional<String> requeueAfterTimeLimit() {
        return byKind.values().stream().map(Cluster::requeueAfterTimeLimit).flatMap(Optional::stream).findFirst();
    }

    @Override
    public Optional<String> cancelAfterStop() {
        return byKind.values().stream().map(Cluster::cancelAfterStop).flatMap(Optional::stream).findFirst();
    }

    @Override
    public void close() {
        List<Cluster> all = List.copyOf(byKind.values());
        RuntimeException first = null;
        for (Cluster c : all) {
            try {
                c.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
