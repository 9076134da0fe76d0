package org.runjob.spec;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * How a node is reached: this machine, an SSH host, or a node of a Slurm cluster. Each backend
 * reaches its own kind; elsewhere runjob asks which kind a node is only to show it (plans, JSON)
 * and for where MASTER_ADDR defaults to.
 */
public sealed interface NodeAddress {

    /** This machine, as a child process. {@code host}, when given, is how other nodes reach it. */
    record Local(Optional<String> host) implements NodeAddress {
        public Local {
            Objects.requireNonNull(host, "host");
        }
    }

    /**
     * An SSH login.
     *
     * @param port empty: the ssh config's port, else 22
     */
    record Ssh(String host, OptionalInt port, Optional<String> user) implements NodeAddress {
        public Ssh {
            Objects.requireNonNull(host, "host");
            Objects.requireNonNull(port, "port");
            Objects.requireNonNull(user, "user");
        }
    }

    /** A node of the Slurm cluster runjob is submitted to, by its Slurm node name. */
    record Slurm(String node) implements NodeAddress {
        public Slurm {
            Objects.requireNonNull(node, "node");
        }
    }

    /** The address other nodes use for this one when the job names none: the host, if any. */
    default Optional<String> reachableAs() {
        if (this instanceof Local l) {
            return l.host();
        }
        return this instanceof Ssh s ? Optional.of(s.host()) : Optional.empty();
    }

    /** How the node is reached, for plans and tables: "local", "ssh root@h:30430", "slurm node n1". */
    default String describe() {
        if (this instanceof Ssh s) {
            return "ssh " + s.user().map(u -> u + "@").orElse("") + s.host() + (s.port().isPresent() ? ":" + s.port().getAsInt() : "");
        }
        return this instanceof Slurm s ? "slurm node " + s.node() : "local";
    }
}
