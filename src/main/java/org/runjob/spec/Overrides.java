package org.runjob.spec;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Applies {@code --set PATH=VALUE} overrides to a composed tree, before validation.
 *
 * <p>Rules:
 * <ol>
 *   <li>PATH is dotted keys with list steps: {@code logs.dir}, {@code nodes[1].gpus},
 *       {@code nodes[a30].gpus} (a list step that is not a number picks the item whose
 *       {@code name} it is).</li>
 *   <li>VALUE is read as YAML flow text: {@code [0,1]} is a list, {@code 29500} a number,
 *       {@code '29500'} a string.</li>
 *   <li>Missing map keys are created; a list index must exist.</li>
 *   <li>Values and problems carry the location {@code --set ARG:1:COL}, so a schema error in an
 *       override names the override.</li>
 * </ol>
 */
final class Overrides {

    private static final Pattern STEP = Pattern.compile("\\G(?:\\.?([A-Za-z0-9_-]+)|\\[([^\\]]+)])");

    private final YamlReader reader;
    private final List<Problem> problems = new ArrayList<>();

    Overrides(YamlReader reader) {
        this.reader = reader;
    }

    List<Problem> problems() {
        return problems;
    }

    SourceNode apply(SourceNode root, List<String> sets) {
        SourceNode out = root;
        for (String set : sets) {
            out = applyOne(out, set);
        }
        return out;
    }

    private SourceNode applyOne(SourceNode root, String set) {
        String display = "--set " + set;
        Location whole = new Location(display, null, 1, 1);
        int eq = set.indexOf('=');
        if (eq <= 0) {
            problems.add(new Problem(whole, null, "--set takes PATH=VALUE, e.g. --set nodes[0].gpus=[0,1]"));
            return root;
        }
        List<String> steps = parsePath(set.substring(0, eq));
        if (steps == null) {
            problems.add(new Problem(whole, null, "bad path '" + set.substring(0, eq)
                    + "': use keys joined by '.', with [N] or [NODE-NAME] for list items"));
            return root;
        }
        String text = set.substring(eq + 1);
        // "--set " plus "PATH=" precede the value in the displayed argument.
        int valueColumn = "--set ".length() + eq + 1;
        SourceNode value;
        if (text.isEmpty()) {
            value = new SourceNode.Scalar(new Location(display, null, 1, valueColumn + 1), "", false);
        } else {
            YamlReader.Result read = reader.readText(text, display, null, valueColumn);
            if (read.root() == null) {
                problems.addAll(read.problems());
                return root;
            }
            value = read.root();
        }
        Location pathAt = new Location(display, null, 1, "--set ".length() + 1);
        return put(root, steps, 0, value, pathAt, "");
    }

    /** Path steps: map keys as themselves, list steps as "[...]"; null when malformed. */
    static List<String> parsePath(String path) {
        List<String> steps = new ArrayList<>();
        Matcher m = STEP.matcher(path);
        int end = 0;
        while (end < path.length() && m.find() && m.start() == end) {
            if (steps.isEmpty() && m.group().startsWith(".")) {
                return null;
            }
            steps.add(m.group(1) != null ? m.group(1) : "[" + m.group(2) + "]");
            end = m.end();
        }
        return end == path.length() && !steps.isEmpty() ? steps : null;
    }

    private SourceNode put(SourceNode node, List<String> steps, int i, SourceNode value, Location at, String pointer) {
        if (i == steps.size()) {
            return value;
        }
        String step = steps.get(i);
        if (step.startsWith("[")) {
            String sel = step.substring(1, step.length() - 1);
            if (!(node instanceof SourceNode.Sequence seq)) {
                problems.add(new Problem(at, pointer, "cannot apply " + step + ": this value is not a list"));
                return node;
            }
            int index = indexOf(seq, sel);
            if (index < 0) {
                problems.add(new Problem(at, pointer, "no list item " + step + " (the list has "
                        + seq.items().size() + " items" + (sel.matches("\\d{1,9}") ? ", counted from 0)" : ")")));
                return node;
            }
            List<SourceNode> items = new ArrayList<>(seq.items());
            items.set(index, put(items.get(index), steps, i + 1, value, at, LocatedJson.child(pointer, index)));
            return new SourceNode.Sequence(seq.at(), items);
        }
        SourceNode.Mapping map;
        if (node instanceof SourceNode.Mapping m) {
            map = m;
        } else if (node == null) {
            map = new SourceNode.Mapping(at, Map.of());
        } else {
            problems.add(new Problem(at, pointer, "cannot set key '" + step + "': this value is not a map"));
            return node;
        }
        Map<String, SourceNode.Entry> entries = new LinkedHashMap<>(map.entries());
        SourceNode.Entry old = entries.get(step);
        SourceNode child = put(old == null ? null : old.value(), steps, i + 1, value, at, LocatedJson.child(pointer, step));
        entries.put(step, new SourceNode.Entry(old == null ? at : old.keyAt(), child));
        return new SourceNode.Mapping(map.at(), entries);
    }

    private static int indexOf(SourceNode.Sequence seq, String sel) {
        if (sel.matches("\\d{1,9}")) {
            int index = Integer.parseInt(sel);
            return index < seq.items().size() ? index : -1;
        }
        for (int i = 0; i < seq.items().size(); i++) {
            if (seq.items().get(i) instanceof SourceNode.Mapping m
                    && m.get("name") instanceof SourceNode.Scalar s && sel.equals(s.value())) {
                return i;
            }
        }
        return -1;
    }
}
