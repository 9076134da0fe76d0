package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.Testbed;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Preflight says what really runs: {@code python3} on the node's PATH is a shim (as pyenv's are)
 * in front of Debian's python3 with torch; the program cell names the interpreter behind it, its
 * version and torch's, in the table's details and in the JSON.
 */
@Tag("torch")
class ProgramFactsTest {

    static final String PYTHON = "/usr/bin/python3";

    @TempDir
    Path tmp;

    @Test
    void aShimmedPython3IsShownAsTheInterpreterItRunsWithItsVersionAndTorchs() throws Exception {
        Testbed.require(Testbed.runs(PYTHON, "-c", "import torch"), "PyTorch for " + PYTHON + " (Debian: python3-torch)");
        Path shims = Files.createDirectories(tmp.resolve("shims"));
        Path shim = shims.resolve("python3");
        Files.writeString(shim, "#!/bin/sh\nexec " + PYTHON + " \"$@\"\n");
        Files.setPosixFilePermissions(shim, PosixFilePermissions.fromString("rwxr-xr-x"));
        Process p = new ProcessBuilder(PYTHON, "-c", "import sys, torch; print('%d.%d.%d' % sys.version_info[:3], torch.__version__)").start();
        String[] expected = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip().split(" ");
        assertThat(p.waitFor()).isZero();
        Path job = tmp.resolve("job.yaml");
        Files.writeString(job, "name: facts\nnodes:\n  - {name: n1, local: true, workers: 1}\nrendezvous: {port: auto}\n"
                + "entrypoint: {command: [python3, x.py]}\nworkdir: " + tmp.resolve("work") + "\n");
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("PATH", shims + ":" + env.get("PATH"));
        String cell = "python3 -> " + PYTHON + " (Python " + expected[0] + ", torch " + expected[1] + ")";

        Cli json = Cli.run(env, "check", "-o", "json", job.toString());
        assertThat(json.code()).as(json.err()).isZero();
        JsonNode program = JsonMapper.builder().build().readTree(json.out()).get("nodes").get(0).get("checks").get("program");
        assertThat(program.get("status").stringValue()).isEqualTo("ok");
        assertThat(program.get("detail").stringValue()).isEqualTo(cell);

        Cli text = Cli.run(env, "check", job.toString());
        assertThat(text.code()).as(text.err()).isZero();
        // not on a terminal the table cuts no cell: the program's is whole in its row, and not repeated below
        assertThat(text.out()).contains("  ok " + cell + "  ").doesNotContain("ok   n1 program:");
    }
}
