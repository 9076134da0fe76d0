package org.runjob.transport;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/** Where and as whom to log in: the job's values, each of which may defer to ~/.ssh/config. */
public record SshTarget(String node, String host, OptionalInt port, Optional<String> user) {
    public SshTarget {
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(host, "host");
    }
}
