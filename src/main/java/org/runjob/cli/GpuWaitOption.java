package org.runjob.cli;

import java.time.Duration;
import java.util.Optional;

import picocli.CommandLine.Option;

/** {@code --wait-for-gpus DURATION}, for the commands that start a run (a mixin). */
final class GpuWaitOption {

    @Option(names = "--wait-for-gpus", paramLabel = "DURATION", converter = Durations.class,
            description = "When a node has fewer free GPUs than its gpus: {count: N}, wait up to DURATION (90s, 10m, 2h) for them, probing again.")
    Duration value;

    /** Whether the option was given. */
    boolean given() {
        return value != null;
    }

    /** The duration given; empty when the option was not. */
    Optional<Duration> duration() {
        return Optional.ofNullable(value);
    }
}
