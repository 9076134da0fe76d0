package org.runjob.preflight;

import java.util.Objects;

/** One check on one node: ok, a warning, a failure, or not run because an earlier check failed. */
public record Cell(Status status, String text) {

    public enum Status { OK, WARN, FAIL, SKIPPED }

    public Cell {
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(text, "text");
    }

    public static Cell ok(String text) {
        return new Cell(Status.OK, text);
    }

    public static Cell warn(String text) {
        return new Cell(Status.WARN, text);
    }

    public static Cell fail(String text) {
        return new Cell(Status.FAIL, text);
    }

    public static Cell skipped() {
        return new Cell(Status.SKIPPED, "-");
    }
}
