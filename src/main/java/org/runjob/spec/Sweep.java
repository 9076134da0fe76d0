package org.runjob.spec;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A job file's {@code sweep:} block: named lists of values whose grid (every combination) is a run
 * each. Its values are text as a command line writes them ({@code 0.001}, never {@code 1.0E-3}).
 * Points are numbered in grid order, the first name varying slowest, as Python's
 * {@code itertools.product}.
 */
public record Sweep(Map<String, List<String>> values) {

    /** More points than this is a mistake in the job file, not a sweep. */
    public static final int MAX_POINTS = 1000;

    /** {@code ${sweep.NAME}}. */
    static final Pattern REF = Pattern.compile("\\$\\{sweep\\.([A-Za-z_][A-Za-z0-9_]*)}");

    public Sweep {
        Map<String, List<String>> copy = new LinkedHashMap<>();
        values.forEach((k, v) -> copy.put(k, List.copyOf(v)));
        values = Collections.unmodifiableMap(copy);
    }

    /** The number of points: the product of the lists' sizes. */
    public int size() {
        long n = 1;
        for (List<String> v : values.values()) {
            n = Math.min(n * v.size(), Integer.MAX_VALUE);
        }
        return (int) n;
    }

    /** Point {@code i} (0-based, grid order): each name's value. */
    public Map<String, String> point(int i) {
        if (i < 0 || i >= size()) {
            throw new IllegalArgumentException("no point " + i + " in a sweep of " + size());
        }
        // i in mixed radix, the last name the lowest digit
        Map<String, String> out = new LinkedHashMap<>();
        int below = size();
        for (var e : values.entrySet()) {
            below /= e.getValue().size();
            out.put(e.getKey(), e.getValue().get(i / below % e.getValue().size()));
        }
        return out;
    }

    /** "lr=0.1 seed=1". */
    public static String describe(Map<String, String> point) {
        return String.join(" ", point.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList());
    }

    /** {@code text} with every {@code ${sweep.NAME}} of {@code point} replaced; an unknown name is left as it is. */
    public static String interpolate(String text, Map<String, String> point) {
        Matcher m = REF.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(out, Matcher.quoteReplacement(point.getOrDefault(m.group(1), m.group())));
        }
        m.appendTail(out);
        return out.toString();
    }

    /**
     * The {@code sweep:} block of a document, when it has one that the schema would accept (a
     * mapping of non-empty lists of scalars); problems the schema reports otherwise.
     */
    static Optional<Sweep> of(SourceNode root, List<Problem> problems) {
        if (!(root instanceof SourceNode.Mapping m) || !(m.get("sweep") instanceof SourceNode.Mapping block)) {
            return Optional.empty();
        }
        Map<String, List<String>> values = new LinkedHashMap<>();
        for (var e : block.entries().entrySet()) {
            if (!(e.getValue().value() instanceof SourceNode.Sequence s) || s.items().isEmpty()) {
                return Optional.empty();
            }
            List<String> texts = new ArrayList<>();
            for (SourceNode item : s.items()) {
                if (!(item instanceof SourceNode.Scalar scalar) || scalar.value() == null) {
                    return Optional.empty();
                }
                texts.add(text(scalar.value()));
            }
            values.put(e.getKey(), texts);
        }
        Sweep sweep = new Sweep(values);
        if (sweep.size() > MAX_POINTS) {
            problems.add(new Problem(block.at(), "/sweep", "a sweep of " + sweep.size() + " runs; at most " + MAX_POINTS));
        }
        return values.isEmpty() ? Optional.empty() : Optional.of(sweep);
    }

    private static String text(Object value) {
        return value instanceof Double d ? text(d.doubleValue()) : String.valueOf(value);
    }

    /** A decimal as a command line writes it: 1.0e-4 reads 0.0001, not 1.0E-4; 2.0 stays 2.0. */
    static String text(double d) {
        if (Double.isNaN(d) || Double.isInfinite(d) || d == Math.rint(d)) {
            return Double.toString(d);
        }
        String plain = BigDecimal.valueOf(d).stripTrailingZeros().toPlainString();
        return plain.length() > 24 ? Double.toString(d) : plain;
    }
}
