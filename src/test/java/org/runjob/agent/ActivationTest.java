package org.runjob.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.protocol.EnvironmentRequest;

/**
 * The activation through real bash: modules through a stand-in module system found by
 * MODULESHOME, a sourced script, a conda found by CONDA_EXE, then a venv; what changed is exactly
 * what the workers get, and a failing step is named.
 */
class ActivationTest {

    @TempDir
    Path tmp;

    private Map<String, String> base() {
        return Map.of("HOME", tmp.toString(), "PATH", "/usr/bin:/bin", "PYTHONHOME", "/old", "KEEP", "same",
                "BASH_ENV", tmp.resolve("rc.sh").toString());
    }

    private static EnvironmentRequest request(String interpreter, String value, List<String> modules, List<String> sources) {
        return new EnvironmentRequest("python3", interpreter, value, modules, sources, List.of(), 1000, "", EnvironmentRequest.Setup.CHECK,
                true, Map.of(), Optional.empty());
    }

    private Path script(String name, String text) throws Exception {
        Path p = Files.writeString(tmp.resolve(name), text);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        return p;
    }

    @Test
    void modulesThenScriptsThenTheVenvChangeExactlyWhatTheyExportAndNoRcFileRuns() throws Exception {
        Files.createDirectories(tmp.resolve("mods/init"));
        Files.writeString(tmp.resolve("mods/init/bash"), "module() { [ \"$1\" = load ] && export LOADED=\"${LOADED:+$LOADED:}$2\""
                + " && export LD_LIBRARY_PATH=/opt/$2/lib; }\n");
        script("rc.sh", "export FROM_RC=1\n");
        Files.writeString(tmp.resolve("env.sh"), "echo noise; export FROM_SCRIPT=\"$#\"\n");
        Files.createDirectories(tmp.resolve("envs/t1/bin"));
        Map<String, String> given = new HashMap<>(base());
        given.put("MODULESHOME", tmp.resolve("mods").toString());
        Activation.Result r = Activation.run(Activation.steps(request("venv", "envs/t1", List.of("cuda/12.1", "nccl"), List.of("env.sh")),
                tmp, false), given, tmp, tmp.resolve("scratch"));
        assertThat(r.error()).isNull();
        assertThat(r.set()).containsExactlyInAnyOrderEntriesOf(Map.of("LOADED", "cuda/12.1:nccl", "LD_LIBRARY_PATH", "/opt/nccl/lib",
                "FROM_SCRIPT", "0", "VIRTUAL_ENV", tmp.resolve("envs/t1").toString(), "PATH", tmp.resolve("envs/t1") + "/bin:/usr/bin:/bin"));
        assertThat(r.unset()).containsExactly("PYTHONHOME");
    }

    @Test
    void condaIsActivatedByItsOwnHookAndAPythonGoesFirstOnPath() throws Exception {
        Path conda = script("conda", "#!/bin/sh\n[ \"$1\" = shell.posix ] && [ \"$2\" = activate ] || exit 2\n"
                + "echo \"export CONDA_PREFIX='/c/envs/$3'; export PATH='/c/envs/$3/bin':\\\"\\$PATH\\\"\"\n");
        Map<String, String> given = new HashMap<>(base());
        given.put("CONDA_EXE", conda.toString());
        Activation.Result r = Activation.run(Activation.steps(request("conda", "train", List.of(), List.of()), tmp, false), given, tmp,
                tmp.resolve("scratch"));
        assertThat(r.error()).isNull();
        assertThat(r.set()).containsEntry("CONDA_PREFIX", "/c/envs/train").containsEntry("PATH", "/c/envs/train/bin:/usr/bin:/bin");
        Activation.Result py = Activation.run(Activation.steps(request("python", "/opt/py/bin/python3.11", List.of(), List.of()), tmp, false),
                base(), tmp, tmp.resolve("scratch"));
        assertThat(py.set()).containsExactlyEntriesOf(Map.of("PATH", "/opt/py/bin:/usr/bin:/bin"));
        assertThat(py.unset()).isEmpty();
    }

    @Test
    void aNodeWithoutAModuleSystemAFailingScriptAndAMissingCondaAreNamed() throws Exception {
        Map<String, String> bare = Map.of("HOME", tmp.toString(), "PATH", "/usr/bin:/bin", "MODULESHOME", tmp.resolve("none").toString());
        Activation.Result noModules = Activation.run(Activation.steps(request("", "", List.of("cuda"), List.of()), tmp, false), bare, tmp,
                tmp.resolve("s"));
        assertThat(noModules.error()).isEqualTo("runjob: this node has no module system (no module command, no MODULESHOME, no Lmod or"
                + " Environment Modules init script): cannot load cuda");
        Files.writeString(tmp.resolve("bad.sh"), "echo 'the cluster says no' >&2\nfalse\n");
        Activation.Result bad = Activation.run(Activation.steps(request("", "", List.of(), List.of("bad.sh")), tmp, false), bare, tmp,
                tmp.resolve("s"));
        assertThat(bad.error()).isEqualTo("runjob: sourcing " + tmp.resolve("bad.sh") + " failed (exit 1) (before it: the cluster says no)");
        Activation.Result noConda = Activation.run(Activation.steps(request("conda", "x", List.of(), List.of()), tmp, false), bare, tmp,
                tmp.resolve("s"));
        assertThat(noConda.error()).startsWith("runjob: no conda on this node");
        assertThat(Activation.steps(request("", "", List.of(), List.of("later.sh")), tmp, true)).isEmpty();
    }
}
