package org.runjob.runtime;

import java.util.List;
import java.util.Objects;

/**
 * What a job file asks of a container: the image, more mounts ({@code SRC[:DST[:OPTS]]}, in the
 * runtime's own form) and more options for the runtime, put before the image.
 */
public record Container(String image, List<String> mounts, List<String> options) {

    public Container {
        Objects.requireNonNull(image, "image");
        mounts = List.copyOf(mounts);
        options = List.copyOf(options);
    }

    /** True when an option starts with one of {@code prefixes}: the job file chose it, so no default of runjob's is added. */
    public boolean hasOption(String... prefixes) {
        return options.stream().anyMatch(o -> List.of(prefixes).stream().anyMatch(o::startsWith));
    }
}
