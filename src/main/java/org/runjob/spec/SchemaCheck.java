package org.runjob.spec;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.regex.Pattern;

import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SchemaRegistryConfig;
import com.networknt.schema.SpecificationVersion;
import com.networknt.schema.path.NodePath;
import org.runjob.json.Json;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Validates a composed job against the job schema and turns
 * each schema error into a {@link Problem} at the place the offending value, or key, was written.
 *
 * <p>Unknown keys are reported at the key, with the closest allowed key as "did you mean"; a missing
 * required key is reported at the map that lacks it. Messages written in the schema's
 * {@code errorMessage} keyword are used as they are.
 *
 * <p>The job schema is {@code schemas/job.schema.json} (bundled in the jar) composed with the
 * registered backends ({@link #compose}): {@code backend:} takes their names, and each backend's
 * block is its own schema. The file itself is that composition for the backends runjob ships,
 * so editors see what runjob checks.
 */
public final class SchemaCheck {

    /** Where the schema lives inside the jar. */
    public static final String RESOURCE = "/schemas/job.schema.json";

    private static final Pattern SECRET_KEY =
            Pattern.compile("(?i)pass(word|wd)?$|secret|token|passphrase");

    private final JsonNode schemaJson;
    private final Schema schema;

    public SchemaCheck(BackendSpecs backends) {
        this.schemaJson = compose(Json.read(resource(RESOURCE)), backends);
        SchemaRegistryConfig config = SchemaRegistryConfig.builder().errorMessageKeyword("errorMessage").build();
        SchemaRegistry registry = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12,
                b -> b.schemaRegistryConfig(config));
        this.schema = registry.getSchema(schemaJson);
    }

    /**
     * {@code base} with {@code backend:} naming {@code backends} (its description made of their
     * summaries) and each backend's block described by its own schema; blocks already there are
     * replaced, so composing a composed schema changes nothing.
     */
    public static JsonNode compose(JsonNode base, BackendSpecs backends) {
        ObjectNode schema = (ObjectNode) base.deepCopy();
        ObjectNode properties = (ObjectNode) schema.get("properties");
        ObjectNode backend = properties.putObject("backend");
        List<String> described = new ArrayList<>();
        ArrayNode names = Json.array();
        for (BackendSpec b : backends.all()) {
            described.add("\"" + b.name() + "\" (" + b.summary() + ")");
            names.add(b.name());
        }
        String last = described.remove(described.size() - 1);
        backend.put("description", "How nodes are reached: " + (described.isEmpty() ? "" : String.join(", ", described) + " or ") + last + ".");
        backend.set("enum", names);
        for (BackendSpec b : backends.all()) {
            if (b.block().isPresent()) {
                String where = b.blockSchema().orElseThrow(() -> new IllegalStateException("backend " + b.name() + " has a block without a schema"));
                properties.set(b.block().get(), Json.read(resource(where)));
            }
        }
        return schema;
    }

    private static String resource(String name) {
        try (InputStream in = SchemaCheck.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("schema " + name + " is not on the classpath");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The schema as JSON (for documentation checks). */
    public JsonNode schemaJson() {
        return schemaJson;
    }

    public List<Problem> check(LocatedJson doc) {
        List<Problem> problems = new ArrayList<>();
        outOfRange(doc.json(), "", doc, problems);
        if (!problems.isEmpty()) {
            // the validator cannot compare such a number with an integer bound: it throws
            return problems;
        }
        for (Error e : schema.validate(doc.json())) {
            problems.add(toProblem(e, doc));
        }
        return problems;
    }

    /** Every number no field could hold (past a 64-bit integer, or not finite), as a problem at its place. */
    private static void outOfRange(JsonNode node, String at, LocatedJson doc, List<Problem> problems) {
        if (node.isObject()) {
            node.properties().forEach(e -> outOfRange(e.getValue(), LocatedJson.child(at, e.getKey()), doc, problems));
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                outOfRange(node.get(i), LocatedJson.child(at, i), doc, problems);
            }
        } else if (node.isNumber() && !node.canConvertToLong() && !(node.isFloatingPointNumber() && Math.abs(node.doubleValue()) < 0x1p63)) {
            problems.add(new Problem(doc.valueAt(at), at, "the number " + node.numberValue() + " is out of range: no field takes a number this large"));
        }
    }

    private Problem toProblem(Error e, LocatedJson doc) {
        String at = pointer(e.getInstanceLocation());
        String property = e.getProperty();
        switch (e.getKeyword()) {
            case "additionalProperties" -> {
                String p = LocatedJson.child(at, property);
                if (SECRET_KEY.matcher(property).find()) {
                    return new Problem(doc.keyAt(p), p, "unknown key '" + property + "': secrets never go in a job file;"
                            + " put the password in an environment variable and name it with ssh.password_env");
                }
                String hint = Suggestions.closest(property, allowedKeys(e))
                        .map(s -> "; did you mean '" + s + "'?")
                        .orElse("; allowed here: " + String.join(", ", allowedKeys(e)));
                return new Problem(doc.keyAt(p), p, "unknown key '" + property + "'" + hint);
            }
            case "propertyNames" -> {
                String p = LocatedJson.child(at, property);
                return new Problem(doc.keyAt(p), p, "'" + property
                        + "' is not a valid variable name: use letters, digits and '_', not starting with a digit");
            }
            case "required" -> {
                return new Problem(doc.valueAt(at), at, "missing required key '" + property + "'");
            }
            case "type", "minItems", "maxItems" -> {
                // the library's own type message already says what was found
                String found = e.isCustomMessage() ? found(e.getInstanceNode()) : "";
                return new Problem(doc.valueAt(at), at, e.getMessage() + found);
            }
            default -> {
                // a value that was meant to name a secret's variable may be the secret itself: never echo it
                String found = at.endsWith("/password_env") ? "" : found(e.getInstanceNode());
                return new Problem(doc.valueAt(at), at, e.getMessage() + found);
            }
        }
    }

    /** What was found instead, with YAML's boolean trap spelt out. */
    private static String found(JsonNode instance) {
        if (instance == null) {
            return "";
        } else if (instance.isBoolean()) {
            return " (found " + instance + ": unquoted yes, no, on and off are YAML booleans; quote the word)";
        } else if (instance.isString()) {
            String text = instance.stringValue();
            return " (found \"" + (text.length() > 40 ? text.substring(0, 40) + "..." : text) + "\")";
        } else if (instance.isNumber()) {
            return " (found " + instance + ")";
        } else if (instance.isNull()) {
            return " (found an empty value)";
        }
        return instance.isArray() ? " (found a list)" : " (found a map)";
    }

    /** The property names the schema object owning an additionalProperties error allows. */
    private Collection<String> allowedKeys(Error e) {
        NodePath fragment = e.getSchemaLocation().getFragment();
        String owner = pointer(fragment.getParent());
        JsonNode props = schemaJson.at(owner).get("properties");
        return props == null ? List.of() : props.propertyNames();
    }

    static String pointer(NodePath path) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < path.getNameCount(); i++) {
            Object element = path.getElement(i);
            out.append('/').append(String.valueOf(element).replace("~", "~0").replace("/", "~1"));
        }
        return out.toString();
    }

}
