package org.runjob.slurm;

import java.util.Collection;
import java.util.List;
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

    /** Prefix of a Slurm node's machine name, as a quarantine names it: {@code slurm:NODE}. */
    public static final String MACHINE_PREFIX = "slurm:";

    /** {@code slurm:NODE}: Slurm's node names are one namespace per cluster. */
    @Override
    public Optional<String> machine() {
        return Optional.of(MACHINE_PREFIX + node);
    }

    /** The Slurm node a quarantine's machine name ({@link #machine}) names, if it names one. */
    public static Optional<String> nodeOf(String machine) {
        return machine.startsWith(MACHINE_PREFIX) && machine.length() > MACHINE_PREFIX.length()
                ? Optional.of(machine.substring(MACHINE_PREFIX.length())) : Optional.empty();
    }

    /** The Slurm nodes among {@code machines} ({@link #nodeOf}), sorted. */
    public static List<String> nodesOf(Collection<String> machines) {
        return machines.stream().map(SlurmAddress::nodeOf).flatMap(Optional::stream).sorted().toList();
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
