package org.runjob.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.runjob.backends.Backends;
import org.runjob.json.Json;
import org.runjob.node.Backend;
import org.runjob.spec.BackendSpecs;
import org.runjob.spec.SchemaCheck;
import org.runjob.testbackend.ProcsBackend;

import tools.jackson.databind.JsonNode;

/** docs/job-file.md's reference, each backend's page and the schema list the same fields, in the same order. */
class JobFileReferenceTest {

    private static final Pattern ROW = Pattern.compile("^\\| `([^`]+)` \\|");

    @Test
    void theReferenceListsExactlyTheSchemaFieldsAndEachBackendPageItsBlock() throws IOException {
        JsonNode schema = new SchemaCheck(Backends.specs()).schemaJson();
        List<String> fields = new ArrayList<>();
        collect(schema, schema, "", fields);
        List<String> blocks = Backends.all().stream().flatMap(b -> b.jobFile().block().stream()).toList();
        List<String> common = fields.stream().filter(f -> blocks.stream().noneMatch(b -> within(f, b))).toList();
        assertThat(documented(Path.of("docs/job-file.md"), f -> true)).containsExactlyElementsOf(common);
        for (Backend b : Backends.all()) {
            Path page = Path.of(b.jobFile().docsPage());
            assertThat(page).as("backend " + b.name() + "'s page").isRegularFile();
            assertThat(Files.readString(page)).as(page.toString()).contains(b.name());
            for (String block : b.jobFile().block().stream().toList()) {
                assertThat(documented(page, f -> within(f, block))).as(page.toString())
                        .containsExactlyElementsOf(fields.stream().filter(f -> within(f, block)).toList());
            }
        }
    }

    /**
     * The schema file editors read is the job schema composed for the backends runjob ships
     * (every registered one but the tests' own): a backend's block changes it only through
     * its own schema.
     */
    @Test
    void theSchemaFileIsTheCompositionForTheShippedBackends() throws IOException {
        JsonNode file = Json.read(Path.of("schemas/job.schema.json"));
        BackendSpecs shipped = new BackendSpecs(Backends.all().stream().filter(b -> !(b instanceof ProcsBackend)).map(Backend::jobFile).toList());
        assertThat(SchemaCheck.compose(file, shipped)).isEqualTo(file);
        assertThat(file.at("/properties/backend/enum")).extracting(JsonNode::stringValue).contains("ssh", "slurm").doesNotContain("procs");
        assertThat(file.at("/properties/slurm")).isEqualTo(Json.read(Path.of("schemas/backends/slurm.schema.json")));
    }

    private static boolean within(String field, String block) {
        return field.equals(block) || field.startsWith(block + ".");
    }

    /** The fields a page's reference tables list, in order: rows of {@code | `FIELD` |} under a "reference" or block heading. */
    private static List<String> documented(Path page, Predicate<String> wanted) throws IOException {
        List<String> documented = new ArrayList<>();
        boolean inSection = false;
        for (String line : Files.readAllLines(page)) {
            if (line.startsWith("#")) {
                inSection = line.equals("## Job file reference") || line.matches("## The `[a-z_]+:` block");
                continue;
            }
            Matcher m = ROW.matcher(line);
            if (inSection && m.find() && wanted.test(m.group(1))) {
                documented.add(m.group(1));
            }
        }
        return documented;
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

    /**
     * Property paths: "a", "a.b", and "a[].b" for arrays of objects; maps of free keys stop at their
     * own name, and so does a second array of entries already listed ({@code spares}, entries as in {@code nodes}).
     */
    private static void collect(JsonNode root, JsonNode node, String prefix, List<String> out) {
        collect(root, node, prefix, out, new HashSet<>());
    }

    private static void collect(JsonNode root, JsonNode node, String prefix, List<String> out, Set<String> listedEntries) {
        node = resolve(root, node);
        JsonNode props = node.get("properties");
        if (props == null) {
            JsonNode items = node.get("items");
            if (items != null && (!items.has("$ref") || listedEntries.add(items.get("$ref").stringValue()))) {
                collect(root, items, prefix + "[]", out, listedEntries);
            }
            return;
        }
        for (String name : props.propertyNames()) {
            String path = prefix.isEmpty() ? name : prefix + "." + name;
            out.add(path);
            collect(root, props.get(name), path, out, listedEntries);
        }
    }

    private static JsonNode resolve(JsonNode root, JsonNode node) {
        JsonNode ref = node.get("$ref");
        return ref == null ? node : root.at(ref.stringValue().substring(1));
    }
}
