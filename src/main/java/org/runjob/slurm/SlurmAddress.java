package org.runjob.slurm;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import org.runjob.spec.NodeAddress;

/** A node of the Slurm cluster runjob is submitted to, by its Slurm node name. */
public record SlurmAddress(String node) implements NodeAddress {

    public SlurmAddress {
        Objects.requireNonNull(node, "node");
    }

    /** Slurm's node name need not be an address other nodes reach: the agent's answer says (MASTER_ADDR). */
    @Override
    public Optional<String> reachableAs() {
        return Optional.empty();
    }

    @Override
    public String describe() {
        return "slurm node " + node;
    }

    @Override
    public Map<String, String> planFields() {
        return Map.of("slurm_node", node);
    }
}
