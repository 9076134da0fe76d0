package org.runjob.testbackend;

import java.util.Optional;

import org.runjob.spec.BackendSettings;
import org.runjob.spec.BackendSpec;
import org.runjob.spec.JsonFields;
import org.runjob.spec.NodeAddress;
import org.runjob.spec.Problems;

import tools.jackson.databind.JsonNode;

/** {@code backend: procs} in the job file: a {@code procs:} block with a label; nodes without a host. */
final class ProcsJobFile implements BackendSpec {

    @Override
    public String name() {
        return "procs";
    }

    @Override
    public String summary() {
        return "every node a process on this machine; a backend of the tests";
    }

    @Override
    public Optional<String> block() {
        return Optional.of("procs");
    }

    @Override
    public Optional<String> blockSchema() {
        return Optional.of("/testbackend/procs.schema.json");
    }

    @Override
    public String docsPage() {
        return "src/test/resources/testbackend/procs.md";
    }

    @Override
    public BackendSettings settings(JsonNode block) {
        return new ProcsSettings(JsonFields.text(block, "label").orElse("unlabelled"));
    }

    @Override
    public NodeAddress address(JsonNode entry, String name) {
        return new ProcsAddress(name);
    }

    @Override
    public void checkNode(JsonNode entry, String pointer, String label, int entries, Problems problems) {
        if (entry.has("host") || entry.has("local")) {
            problems.atKey(pointer + (entry.has("host") ? "/host" : "/local"), label + " is a process of backend: procs: it has no host and is not local");
        }
    }
}
