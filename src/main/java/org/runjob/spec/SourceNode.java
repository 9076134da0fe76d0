package org.runjob.spec;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A YAML value with the place it was written, kept through composition ({@code extends}),
 * interpolation and {@code --set} so that every later error can name its file, line and column.
 *
 * <p>Scalars hold what SnakeYAML's safe constructor makes of them: {@code String}, {@code Integer},
 * {@code Long}, {@code BigInteger}, {@code Double}, {@code Boolean} or {@code null}.
 */
public sealed interface SourceNode {

    Location at();

    /** A scalar; {@code plain} is true when it was written unquoted (its type came from YAML's rules). */
    record Scalar(Location at, Object value, boolean plain) implements SourceNode {
    }

    /** A sequence. */
    record Sequence(Location at, List<SourceNode> items) implements SourceNode {
        public Sequence {
            items = List.copyOf(items);
        }
    }

    /** A mapping, in file order; each entry remembers where its key was written. */
    record Mapping(Location at, Map<String, Entry> entries) implements SourceNode {
        public Mapping {
            entries = Collections.unmodifiableMap(new LinkedHashMap<>(entries));
        }

        public SourceNode get(String key) {
            Entry e = entries.get(key);
            return e == null ? null : e.value();
        }
    }

    /** One key of a mapping: where the key was written and its value. */
    record Entry(Location keyAt, SourceNode value) {
    }
}
