package org.runjob.spec;

import java.math.BigInteger;
import java.util.HashMap;
import java.util.Map;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The composed job as a JSON tree (what the schema validates) plus, for every JSON pointer, where
 * its value and, for map entries, its key were written.
 */
public final class LocatedJson {

    private final JsonNode json;
    private final Location rootAt;
    private final Map<String, Location> values = new HashMap<>();
    private final Map<String, Location> keys = new HashMap<>();

    private LocatedJson(SourceNode root) {
        this.rootAt = root.at();
        this.json = convert(root, "");
    }

    /** Converts a composed tree; the tree must hold no null nodes (reading succeeded). */
    public static LocatedJson of(SourceNode root) {
        return new LocatedJson(root);
    }

    public JsonNode json() {
        return json;
    }

    /** Where the value at {@code pointer} was written, or the nearest enclosing value's place. */
    public Location valueAt(String pointer) {
        for (String p = pointer; ; p = parent(p)) {
            Location at = values.get(p);
            if (at != null) {
                return at;
            }
            if (p.isEmpty()) {
                return rootAt;
            }
        }
    }

    /** Where the key of the entry at {@code pointer} was written, else where its value was. */
    public Location keyAt(String pointer) {
        Location at = keys.get(pointer);
        return at != null ? at : valueAt(pointer);
    }

    /** Appends one reference token to a pointer, escaped as RFC 6901 says. */
    public static String child(String pointer, String token) {
        return pointer + "/" + token.replace("~", "~0").replace("/", "~1");
    }

    public static String child(String pointer, int index) {
        return pointer + "/" + index;
    }

    private static String parent(String pointer) {
        int slash = pointer.lastIndexOf('/');
        return slash <= 0 ? "" : pointer.substring(0, slash);
    }

    private JsonNode convert(SourceNode node, String pointer) {
        values.put(pointer, node.at());
        JsonNodeFactory f = JsonNodeFactory.instance;
        if (node instanceof SourceNode.Mapping m) {
            ObjectNode obj = f.objectNode();
            m.entries().forEach((k, e) -> {
                String p = child(pointer, k);
                keys.put(p, e.keyAt());
                obj.set(k, convert(e.value(), p));
            });
            return obj;
        }
        if (node instanceof SourceNode.Sequence s) {
            ArrayNode arr = f.arrayNode();
            for (int i = 0; i < s.items().size(); i++) {
                arr.add(convert(s.items().get(i), child(pointer, i)));
            }
            return arr;
        }
        Object v = ((SourceNode.Scalar) node).value();
        if (v == null) {
            return f.nullNode();
        } else if (v instanceof String str) {
            return f.stringNode(str);
        } else if (v instanceof Boolean b) {
            return f.booleanNode(b);
        } else if (v instanceof Integer i) {
            return f.numberNode(i);
        } else if (v instanceof Long l) {
            return f.numberNode(l);
        } else if (v instanceof BigInteger b) {
            return f.numberNode(b);
        } else if (v instanceof Double d) {
            return f.numberNode(d);
        }
        return f.stringNode(String.valueOf(v));
    }
}
