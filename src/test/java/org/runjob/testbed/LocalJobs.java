package org.runjob.testbed;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Job files of local nodes for the tests that run a plug-in (a runtime, a source) through every stage. */
public final class LocalJobs {

    private LocalJobs() {
    }

    /**
     * {@code dir/NAME.yaml}: job {@code name} on two local nodes, {@code a} with 2 workers and
     * {@code b} with 1, its workdir and logs under {@code dir}, then {@code block} (whole YAML
     * lines), each rank running {@code sh -c SCRIPT}.
     */
    public static Path twoNodes(Path dir, String name, String block, String script) throws IOException {
        return Files.writeString(dir.resolve(name + ".yaml"), "name: " + name + "\nnodes:\n  - {name: a, local: true, workers: 2}\n"
                + "  - {name: b, local: true, workers: 1}\n"
                + "workdir: " + dir.resolve("work") + "\nlogs: {dir: " + dir.resolve("runs") + "}\n"
                + block
                + "entrypoint: {command: [sh, -c, '" + script + "']}\n");
    }
}
