package org.runjob.spec;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Where a value came from: a file as the user named it, a 1-based line and column.
 *
 * <p>{@code path} is the real file behind {@code display} (used to resolve relative paths such as
 * {@code files} entries against the file that named them); it is {@code null} for values that come
 * from the command line ({@code --set}), which resolve against the working directory.
 */
public record Location(String display, Path path, int line, int column) {

    public Location {
        Objects.requireNonNull(display, "display");
        if (line < 1 || column < 1) {
            throw new IllegalArgumentException("line and column are 1-based, got " + line + ":" + column);
        }
    }

    /** The directory relative paths written at this location resolve against. */
    public Path baseDirectory() {
        if (path == null) {
            return Path.of("").toAbsolutePath();
        }
        Path parent = path.toAbsolutePath().getParent();
        return parent == null ? Path.of("/") : parent;
    }

    @Override
    public String toString() {
        return display + ":" + line + ":" + column;
    }
}
