package org.runjob.spec;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import tools.jackson.databind.JsonNode;

/** The backends a job file may name ({@link BackendSpec}), in the order they were registered. */
public final class BackendSpecs {

    private final Map<String, BackendSpec> byName = new LinkedHashMap<>();

    public BackendSpecs(List<BackendSpec> specs) {
        for (BackendSpec s : specs) {
            if (byName.putIfAbsent(s.name(), s) != null) {
                throw new IllegalArgumentException("two backends are named " + s.name());
            }
        }
        if (!byName.containsKey(JobSpec.BackendUse.DEFAULT)) {
            throw new IllegalArgumentException("no backend is named " + JobSpec.BackendUse.DEFAULT + ", the default");
        }
    }

    public List<BackendSpec> all() {
        return List.copyOf(byName.values());
    }

    public Optional<BackendSpec> named(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** The backend a document names with {@code backend:}, or the default; empty for a name no backend has. */
    Optional<BackendSpec> of(JsonNode root) {
        JsonNode b = root.get("backend");
        if (b == null) {
            return named(JobSpec.BackendUse.DEFAULT);
        }
        return b.isString() ? named(b.stringValue()) : Optional.empty();
    }

    /** The names of the backends that pick nodes given as a count. */
    List<String> pickingNodes() {
        return byName.values().stream().filter(BackendSpec::picksNodes).map(BackendSpec::name).toList();
    }
}
