package org.runjob.spec;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;


/**
 * Replaces {@code ${env:NAME}} and {@code ${env:NAME:-default}} in string values; a second pass
 * ({@link #sweep}) replaces {@code ${sweep.NAME}}.
 *
 * <p>Rules:
 * <ol>
 *   <li>Only string scalars are touched, never keys.</li>
 *   <li>{@code $${} stands for a literal {@code ${}.</li>
 *   <li>A variable that is unset and has no default is a problem naming the variable and its place.</li>
 *   <li>An unquoted value that is exactly one reference becomes a number when the result is a
 *       plain decimal number (no leading zero) and a boolean when it is {@code true} or
 *       {@code false}, so {@code port: ${env:PORT:-29500}} is a number; anything else, and every
 *       quoted value, is the exact string: {@code #}, {@code &}, quotes and leading zeros are
 *       never re-read as YAML.</li>
 * </ol>
 * The environment is passed in: interpolation reads nothing else.
 */
final class Interpolator {

    private static final Pattern REF = Pattern.compile("\\$\\$\\{|\\$\\{env:([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?}");
    private static final Pattern WHOLE = Pattern.compile("\\$\\{env:[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?}");

    private final Map<String, String> env;
    /** When present, this pass replaces {@code ${sweep.NAME}} (with these values) and nothing else. */
    private final Optional<Map<String, String>> sweep;
    private final List<Problem> problems = new ArrayList<>();

    Interpolator(Map<String, String> env) {
        this.env = Map.copyOf(env);
        this.sweep = Optional.empty();
    }

    private Interpolator(Optional<Map<String, String>> sweep) {
        this.env = Map.of();
        this.sweep = sweep;
    }

    /**
     * The pass that replaces {@code ${sweep.NAME}} with {@code point}'s value (after {@code --set},
     * so overrides may use it too); empty {@code point} when the job has no sweep, and every
     * reference is then a problem. Numbers and booleans become typed as {@code ${env:...}} do.
     */
    static Interpolator sweep(Map<String, String> point) {
        return new Interpolator(Optional.of(new LinkedHashMap<>(point)));
    }

    List<Problem> problems() {
        return problems;
    }

    SourceNode apply(SourceNode node, String pointer) {
        if (node instanceof SourceNode.Mapping m) {
            Map<String, SourceNode.Entry> out = new LinkedHashMap<>();
            m.entries().forEach((k, e) ->
                    out.put(k, new SourceNode.Entry(e.keyAt(), apply(e.value(), LocatedJson.child(pointer, k)))));
            return new SourceNode.Mapping(m.at(), out);
        }
        if (node instanceof SourceNode.Sequence s) {
            List<SourceNode> out = new ArrayList<>();
            for (int i = 0; i < s.items().size(); i++) {
                out.add(apply(s.items().get(i), LocatedJson.child(pointer, i)));
            }
            return new SourceNode.Sequence(s.at(), out);
        }
        SourceNode.Scalar scalar = (SourceNode.Scalar) node;
        if (!(scalar.value() instanceof String text) || !text.contains("${")) {
            return scalar;
        }
        Matcher m = (sweep.isPresent() ? Sweep.REF : REF).matcher(text);
        StringBuilder out = new StringBuilder();
        boolean ok = true;
        boolean any = false;
        while (m.find()) {
            any = true;
            String replacement;
            if (sweep.isPresent()) {
                replacement = sweep.get().get(m.group(1));
                if (replacement == null) {
                    problems.add(new Problem(scalar.at(), pointer, "${sweep." + m.group(1) + "}: "
                            + (sweep.get().isEmpty() ? "the job has no sweep: block" : "the sweep names only "
                            + String.join(", ", sweep.get().keySet()))));
                    ok = false;
                    replacement = "";
                }
            } else if (m.group().equals("$${")) {
                replacement = "${";
            } else {
                String name = m.group(1);
                String value = env.get(name);
                if (value == null) {
                    value = m.group(2);
                }
                if (value == null) {
                    problems.add(new Problem(scalar.at(), pointer, "environment variable " + name
                            + " is not set (write ${env:" + name + ":-DEFAULT} to give a default)"));
                    ok = false;
                    value = "";
                }
                replacement = value;
            }
            m.appendReplacement(out, Matcher.quoteReplacement(replacement));
        }
        m.appendTail(out);
        if (!ok || !any) {
            return scalar; // nothing of this pass's: the other pass may still type it
        }
        String result = out.toString();
        if (scalar.plain() && (sweep.isPresent() ? Sweep.REF : WHOLE).matcher(text).matches()) {
            return new SourceNode.Scalar(scalar.at(), typed(result), true);
        }
        return new SourceNode.Scalar(scalar.at(), result, false);
    }

    private static final Pattern INTEGER = Pattern.compile("-?(0|[1-9][0-9]{0,17})");
    private static final Pattern DECIMAL = Pattern.compile("-?(0|[1-9][0-9]*)\\.[0-9]+([eE][-+]?[0-9]+)?");

    /** A plain number or boolean as that type; any other text as itself. */
    private static Object typed(String text) {
        if (INTEGER.matcher(text).matches()) {
            long v = Long.parseLong(text);
            return v == (int) v ? (Object) (int) v : (Object) v;
        }
        if (DECIMAL.matcher(text).matches()) {
            return Double.parseDouble(text);
        }
        if (text.equals("true") || text.equals("false")) {
            return Boolean.parseBoolean(text);
        }
        return text;
    }
}
