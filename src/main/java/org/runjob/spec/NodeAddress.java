package org.runjob.spec;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * How a node is reached. Each backend reaches its own kinds ({@link BackendSpec#address}); this
 * machine ({@link Local}) and SSH logins ({@link Ssh}) are here because more than one backend
 * reaches them. Elsewhere runjob asks an address only what a plan shows and where MASTER_ADDR
 * defaults to.
 */
public interface NodeAddress {

    /** The address other nodes use for this one when the job names none: its host, if it has one. */
    Optional<String> reachableAs();

    /** How the node is reached, for plans and tables: "local", "ssh root@h:30430", "slurm node n1". */
    String describe();

    /** The port it is reached at, when it has one of its own (the plan's {@code port}). */
    default OptionalInt port() {
        return OptionalInt.empty();
    }

    /**
     * The machine, as a quarantine names it ({@code runjob nodes}): the same in every job file that
     * reaches it the same way; empty for a node that is never quarantined (this machine).
     */
    default Optional<String> machine() {
        return Optional.empty();
    }

    /** What else a plan shows of it, by JSON key (Slurm's {@code slurm_node}); none by default. */
    default Map<String, String> planFields() {
        return Map.of();
    }

    /** This machine, as a child process. {@code host}, when given, is how other nodes reach it. */
    record Local(Optional<String> host) implements NodeAddress {
        public Local {
            Objects.requireNonNull(host, "host");
        }

        @Override
        public Optional<String> reachableAs() {
            return host;
        }

        @Override
        public String describe() {
            return "local";
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

        @Override
        public Optional<String> reachableAs() {
            return Optional.of(host);
        }

        @Override
        public String describe() {
            return "ssh " + user.map(u -> u + "@").orElse("") + host + (port.isPresent() ? ":" + port.getAsInt() : "");
        }

        /** The host and port as the job file writes them (port 22 when it gives none). */
        @Override
        public Optional<String> machine() {
            return Optional.of(host + ":" + port.orElse(22));
        }
    }
}
