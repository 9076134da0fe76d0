package org.runjob.json;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
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

    /** The most of a JSON file runjob reads back (a status.json of 10,000 ranks is about 3 MiB). */
    public static final int MAX_FILE_BYTES = 16 << 20;

    /**
     * The tree of a UTF-8 file of at most {@link #MAX_FILE_BYTES}.
     *
     * @throws IOException when it cannot be read, or is larger: then it is no file runjob wrote
     */
    public static JsonNode read(Path file) throws IOException {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_FILE_BYTES + 1);
        }
        if (bytes.length > MAX_FILE_BYTES) {
            throw new IOException(file + " is larger than the " + (MAX_FILE_BYTES >> 20) + " MiB runjob reads back of a file it writes:"
                    + " not runjob's");
        }
        return MAPPER.readTree(new String(bytes, StandardCharsets.UTF_8));
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
