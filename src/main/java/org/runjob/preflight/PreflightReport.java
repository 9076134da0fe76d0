package org.runjob.preflight;

import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.stream.Collectors;

/**
 * The preflight result: a row per node, and the rendezvous port chosen for {@code port: auto}.
 * A job starts only when {@link #ok()}.
 */
public record PreflightReport(List<NodeReport> nodes, OptionalInt masterPort) {

    public PreflightReport {
        nodes = List.copyOf(nodes);
    }

    public boolean ok() {
        return nodes.stream().noneMatch(NodeReport::failed);
    }

    /** Node name to the interface its workers should use for gloo/NCCL sockets, where found. */
    public Map<String, String> interfaces() {
        return nodes.stream().filter(n -> n.socketInterface().isPresent())
                .collect(Collectors.toMap(NodeReport::node, n -> n.socketInterface().get()));
    }
}
