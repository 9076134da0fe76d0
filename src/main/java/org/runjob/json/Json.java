package org.runjob.json;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The one JSON mapper runjob reads and writes with (made once per process: building a mapper costs
 * start-up time), and the uses every package shares. Jackson's exceptions are unchecked; {@link #read(Path)}
 * adds only the file's own {@link IOException}.
 */
public final class Json {

    /** Jackson's defaults: no modules, no naming strategy; thread-safe once built. */
    public static final JsonMapper MAPPER = JsonMapper.builder().build();

    private Json() {
    }

    /** The tree of {@code text}; an empty text is a missing node. */
    public static JsonNode read(String text) {
        return MAPPER.readTree(text);
    }

    /** The tree of a UTF-8 file. */
    public static JsonNode read(Path file) throws IOException {
        return MAPPER.readTree(Files.readString(file));
    }

    /** {@code value} on one line. */
    public static String compact(Object value) {
        return MAPPER.writeValueAsString(value);
    }

    /** {@code value} indented, as runjob's {@code -o json} and run-folder files print it (no final newline). */
    public static String pretty(Object value) {
        return MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(value);
    }

    public static ObjectNode object() {
        return JsonNodeFactory.instance.objectNode();
    }

    public static ArrayNode array() {
        return JsonNodeFactory.instance.arrayNode();
    }
}
