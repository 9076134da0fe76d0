package org.runjob.spec;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import tools.jackson.databind.JsonNode;

/**
 * Values of a document that passed the schema, read the one way every binder reads them (the
 * job's own fields in {@link SpecBinder}, a backend's block and node entries in its
 * {@link BackendSpec}): an absent key is empty, a present one has the schema's type.
 */
public final class JsonFields {

    private JsonFields() {
    }

    public static Optional<String> text(JsonNode parent, String key) {
        JsonNode v = parent.get(key);
        return v == null ? Optional.empty() : Optional.of(v.stringValue());
    }

    public static Optional<Integer> integer(JsonNode parent, String key) {
        JsonNode v = parent.get(key);
        return v == null ? Optional.empty() : Optional.of(v.intValue());
    }

    /** Argv items: strings as written, numbers and booleans as their YAML text; none for an absent list. */
    public static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        if (array != null) {
            array.forEach(v -> out.add(text(v)));
        }
        return out;
    }

    /** A scalar as text; a decimal as written on a command line (0.0001, not 1.0E-4). */
    public static String text(JsonNode v) {
        return v.isDouble() ? Sweep.text(v.doubleValue()) : v.asString();
    }
}
