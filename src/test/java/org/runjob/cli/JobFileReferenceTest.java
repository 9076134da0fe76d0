package org.runjob.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.runjob.spec.SchemaCheck;

import tools.jackson.databind.JsonNode;

/** docs/job-file.md's reference and the schema list the same fields, in the same order. */
class JobFileReferenceTest {

    private static final Pattern ROW = Pattern.compile("^\\| `([^`]+)` \\|");

    @Test
    void theReferenceListsExactlyTheSchemaFields() throws IOException {
        List<String> documented = new ArrayList<>();
        boolean inSection = false;
        for (String line : Files.readAllLines(Path.of("docs/job-file.md"))) {
            if (line.startsWith("#")) {
                inSection = line.equals("## Job file reference");
                continue;
            }
            Matcher m = ROW.matcher(line);
            if (inSection && m.find()) {
                documented.add(m.group(1));
            }
        }
        JsonNode schema = new SchemaCheck().schemaJson();
        List<String> fields = new ArrayList<>();
        collect(schema, schema, "", fields);
        assertThat(documented).containsExactlyElementsOf(fields);
    }

    @Test
    void everyJobFileStartsWithTheSchemaLineAndItResolves() throws IOException {
        try (var files = Files.walk(Path.of("jobs"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).toList()) {
                String first = Files.readAllLines(f).get(0);
                assertThat(first).as(f.toString()).startsWith("# yaml-language-server: $schema=");
                Path target = f.getParent().resolve(first.substring(first.indexOf('=') + 1)).normalize();
                assertThat(target).as(f.toString()).isEqualTo(Path.of("schemas/job.schema.json"));
            }
        }
    }

    /** Property paths: "a", "a.b", and "a[].b" for arrays of objects; maps of free keys stop at their own name. */
    private static void collect(JsonNode root, JsonNode node, String prefix, List<String> out) {
        node = resolve(root, node);
        JsonNode props = node.get("properties");
        if (props == null) {
            JsonNode items = node.get("items");
            if (items != null) {
                collect(root, items, prefix + "[]", out);
            }
            return;
        }
        for (String name : props.propertyNames()) {
            String path = prefix.isEmpty() ? name : prefix + "." + name;
            out.add(path);
            collect(root, props.get(name), path, out);
        }
    }

    private static JsonNode resolve(JsonNode root, JsonNode node) {
        JsonNode ref = node.get("$ref");
        return ref == null ? node : root.at(ref.stringValue().substring(1));
    }
}
