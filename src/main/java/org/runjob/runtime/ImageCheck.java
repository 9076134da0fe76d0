package org.runjob.runtime;

import java.util.List;
import java.util.Objects;

/** How a node shows it has a container's image, before any worker starts. */
public sealed interface ImageCheck {

    /** A command of the runtime's that prints {@code ID [DIGEST]} and exits 0 when the image is there. */
    record Inspect(List<String> argv) implements ImageCheck {
        public Inspect {
            argv = List.copyOf(argv);
        }
    }

    /** An image file that must exist on the node ({@code ~} and variables as in a workdir). */
    record File(String path) implements ImageCheck {
        public File {
            Objects.requireNonNull(path, "path");
        }
    }

    /** Nothing to check before the start (an image the runtime fetches itself, by URL). */
    record Unchecked() implements ImageCheck {
    }
}
