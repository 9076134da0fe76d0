package org.runjob.spec;

import java.util.Optional;

import tools.jackson.databind.JsonNode;

/**
 * What a backend adds to the job file: the {@code backend:} name it answers to, its settings
 * block and that block's schema, the address of each node entry, its rules, and its docs page.
 * The loader knows backends only through these; a new backend brings one and nothing in
 * {@code spec} changes.
 *
 * <p>Every method reads a document that may be invalid elsewhere (the rules run beside the
 * schema), except {@link #settings} and {@link #address}, which run on a valid one.
 */
public interface BackendSpec {

    /** The job file's {@code backend:} value. */
    String name();

    /** One line for the schema's description of {@code backend:}: how this backend reaches nodes. */
    String summary();

    /** The key of its settings block ({@code slurm:}); empty when it has none. */
    default Optional<String> block() {
        return Optional.empty();
    }

    /** The classpath resource holding the JSON Schema of its block; present when {@link #block} is. */
    default Optional<String> blockSchema() {
        return Optional.empty();
    }

    /** Its page under {@code docs/}, e.g. {@code docs/slurm.md}. */
    String docsPage();

    /**
     * True when nodes may be given as a count ({@code nodes: [{count: N}]}): the backend picks and
     * names them when the run starts.
     */
    default boolean picksNodes() {
        return false;
    }

    /** Its settings from its block ({@code block} is an empty object when the job has none). */
    default BackendSettings settings(JsonNode block) {
        return BackendSettings.NONE;
    }

    /** How node entry {@code entry}, named {@code name}, is reached. */
    NodeAddress address(JsonNode entry, String name);

    /**
     * Its rules for one node entry.
     *
     * @param label how messages name the entry: "node 'a'", "node 2"
     * @param entries how many node entries the job has
     */
    default void checkNode(JsonNode entry, String pointer, String label, int entries, Problems problems) {
    }

    /**
     * Its rules for the job as a whole.
     *
     * @param master the master's node entry (named by {@code rendezvous.master}, else the first), if it is found
     */
    default void checkJob(JsonNode root, Optional<JsonNode> master, Problems problems) {
    }
}
