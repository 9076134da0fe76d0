package org.runjob.agent;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** Whether a worker's program can be run, found the way execvp finds it. */
public final class Programs {

    private Programs() {
    }

    /** Why {@code program} cannot be run from {@code workdir} with this PATH, or empty when it can. */
    public static Optional<String> missing(String program, String path, Path workdir) {
        if (program.contains("/")) {
            Path p = workdir.resolve(program);
            return Files.isRegularFile(p) && Files.isExecutable(p) ? Optional.empty()
                    : Optional.of("cannot start " + program + ": no such executable file");
        }
        for (String dir : (path == null ? "" : path).split(File.pathSeparator)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir).resolve(program);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return Optional.empty();
            }
        }
        return Optional.of("cannot start " + program + ": not found on the node's PATH");
    }
}
