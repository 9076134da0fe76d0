package org.runjob.spec;

import java.util.Comparator;
import java.util.Objects;

/**
 * One thing wrong with a job file, printed as {@code FILE:LINE:COL: /json/pointer: message}.
 *
 * <p>{@code pointer} is the JSON pointer of the value in the merged job ({@code ""} is the whole
 * document); it is {@code null} for problems found before there is a document, such as YAML syntax.
 */
public record Problem(Location at, String pointer, String message) {

    /** File, then line, then column, then pointer: the order problems are reported in. */
    public static final Comparator<Problem> IN_FILE_ORDER = Comparator
            .comparing((Problem p) -> p.at().display())
            .thenComparingInt(p -> p.at().line())
            .thenComparingInt(p -> p.at().column())
            .thenComparing(p -> p.pointer() == null ? "" : p.pointer());

    public Problem {
        Objects.requireNonNull(at, "at");
        Objects.requireNonNull(message, "message");
    }

    @Override
    public String toString() {
        if (pointer == null) {
            return at + ": " + message;
        }
        return at + ": " + (pointer.isEmpty() ? "/" : pointer) + ": " + message;
    }
}
