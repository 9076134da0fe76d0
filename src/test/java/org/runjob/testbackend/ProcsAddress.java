package org.runjob.testbackend;

import java.util.Map;
import java.util.Optional;

import org.runjob.spec.NodeAddress;

/** A node of {@code backend: procs}: a process on this machine, named by the job file. */
public record ProcsAddress(String node) implements NodeAddress {

    @Override
    public Optional<String> reachableAs() {
        return Optional.of("127.0.0.1");
    }

    @Override
    public String describe() {
        return "process " + node;
    }

    @Override
    public Map<String, String> planFields() {
        return Map.of("procs_node", node);
    }
}
