package org.runjob.cli;

import java.time.Duration;
import java.util.Optional;

import org.runjob.run.Io;

import picocli.CommandLine.Option;

/** {@code --wait-for-gpus DURATION}, for the commands that start a run (a mixin). */
final class GpuWaitOption {

    @Option(names = "--wait-for-gpus", paramLabel = "DURATION",
            description = "When a node has fewer free GPUs than its gpus: {count: N}, wait up to DURATION (90s, 10m, 2h) for them, probing again.")
    String value;

    /** Whether the option was given. */
    boolean given() {
        return value != null;
    }

    /** The duration given; empty when the option was not. Call {@link #valid} first. */
    Optional<Duration> duration() {
        return value == null ? Optional.empty() : Durations.parse(value);
    }

    /** False, after saying why on stderr, when the value is no duration. */
    boolean valid(Io io) {
        if (value != null && Durations.parse(value).isEmpty()) {
            io.err().println("runjob: --wait-for-gpus takes a duration such as 90s, 10m or 2h, not '" + value + "'");
            return false;
        }
        return true;
    }
}
