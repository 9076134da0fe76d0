package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.RunjobProcess;

/** The environment preflight reports is the one the workers and the setup really get. */
class EnvironmentTruthTest {

    @TempDir
    Path tmp;

    @Test
    void aVenvThatIsNotOnTheNodeFailsPreflightNamingNodeAndPathAndNothingStarts() throws Exception {
        LocalJobs jobs = new LocalJobs(tmp);
        Path missing = tmp.resolve("envs/missing");
        Path job = jobs.job("novenv", "lines.py", 1, 1, Map.of("LINES", "1"), 2, 0);
        Files.writeString(job, Files.readString(job) + "environment: {venv: " + missing + "}\n");
        Cli run = jobs.runInProcess(job);
        assertThat(run.code()).as(run.err()).isEqualTo(3);
        assertThat(run.err()).contains("no venv " + missing + " on this node (no such directory): make it there, or fix environment.venv");
        assertThat(run.out()).doesNotContain("rank 0 line");
    }

    @Test
    void aVenvTheSetupMakesIsFoundOnceSetupRanAndTheWorkersRunItsPython() throws Exception {
        LocalJobs jobs = new LocalJobs(tmp);
        Path made = tmp.resolve("envs/made");
        Path job = jobs.job("madevenv", "lines.py", 1, 1, Map.of("LINES", "1"), 2, 0);
        Files.writeString(job, Files.readString(job) + "environment: {venv: " + made + ", setup: ['python3 -m venv --without-pip " + made
                + "']}\n");
        Cli run = jobs.runInProcess(job);
        assertThat(run.code()).as(run.err()).isZero();
        assertThat(run.out()).contains("rank 0 line 0");
        assertThat(Files.readString(jobs.runFolder("madevenv").resolve("environment.json"))).contains("VIRTUAL_ENV");
    }

    @Test
    void setupRunsInTheWorkersEnvironmentNotInOneALoginRcFileChanged() throws Exception {
        Path venv = tmp.resolve("envs/train");
        Process mk = new ProcessBuilder("python3", "-m", "venv", "--without-pip", venv.toString()).inheritIO().start();
        assertThat(mk.waitFor()).isZero();
        // a home whose .bashrc puts a pyenv-like shim first, as `pyenv init` does; bash reads it for a command run under sshd
        Path home = Files.createDirectories(tmp.resolve("home"));
        Path shims = Files.createDirectories(home.resolve("shims"));
        Files.writeString(shims.resolve("python3"), "#!/bin/sh\necho shim\n");
        Files.setPosixFilePermissions(shims.resolve("python3"), PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(home.resolve(".bashrc"), "export PATH=" + shims + ":$PATH\n");
        Path seen = tmp.resolve("setup-python");
        LocalJobs jobs = new LocalJobs(tmp);
        Path job = jobs.job("rcfile", "lines.py", 1, 1, Map.of("LINES", "1"), 2, 0);
        Files.writeString(job, Files.readString(job) + "environment: {venv: " + venv + ", setup: ['command -v python3 > " + seen
                + "; echo \"$BASH_ENV\" >> " + seen + "']}\n");
        Path bashEnv = Files.writeString(tmp.resolve("bash-env.sh"), "export PATH=" + shims + ":$PATH\n");
        Process runjob = RunjobProcess.start(tmp, job, Map.of("HOME", home.toString(), "SSH_CLIENT", "10.0.0.9 40000 22", "SHLVL", "0",
                "BASH_ENV", bashEnv.toString()));
        assertThat(runjob.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(runjob.exitValue()).as(RunjobProcess.stderrOf(tmp, job)).isZero();
        assertThat(Files.readAllLines(seen)).containsExactly(venv.resolve("bin/python3").toString(), "");
    }

    @Test
    void checkAndTheRunAgreeWhetherASetupThatNamesAShippedFileIsDue() throws Exception {
        LocalJobs jobs = new LocalJobs(tmp);
        Path pkg = Files.writeString(tmp.resolve("pkg.txt"), "requests\n");
        Path job = jobs.job("keyed", "lines.py", 1, 1, Map.of("LINES", "1"), 2, 0);
        Files.writeString(job, Files.readString(job).replaceFirst("files: \\[", "files: [" + pkg + ", ")
                + "environment: {setup: ['cat pkg.txt > /dev/null']}\n");
        Cli before = Cli.run(System.getenv(), "check", job.toString());
        assertThat(before.code()).as(before.err()).isZero();
        assertThat(before.out() + before.err()).contains("setup due");
        Cli run = jobs.runInProcess(job);
        assertThat(run.code()).as(run.err()).isZero();
        Cli after = Cli.run(System.getenv(), "check", job.toString());
        assertThat(after.code()).as(after.err()).isZero();
        assertThat(after.out() + after.err()).contains("setup up to date").doesNotContain("setup due");
        Files.writeString(pkg, "requests==2.0\n");
        Cli changed = Cli.run(System.getenv(), "check", job.toString());
        assertThat(changed.out() + changed.err()).as("the named file changed").contains("setup due");
    }

    @Test
    void twoSetupsInOneSharedWorkdirEachGetATemporaryDirectoryOfTheirOwn() throws Exception {
        LocalJobs jobs = new LocalJobs(tmp);
        Path seen = Files.createDirectories(tmp.resolve("seen"));
        String setup = "echo $TMPDIR > " + seen + "/$RUNJOB_NODE; stat -c %a $TMPDIR >> " + seen + "/$RUNJOB_NODE; sleep 1";
        Path job = jobs.job("twoenvs", "lines.py", 2, 1, Map.of("LINES", "1"), 2, 0);
        String yaml = Files.readString(job)
                .replace("{name: n1, local: true, workers: 1}", "{name: n1, local: true, workers: 1, environment: {setup: ['" + setup + "']}}")
                .replace("{name: n2, local: true, workers: 1}", "{name: n2, local: true, workers: 1, environment: {setup: ['" + setup
                        + " # the other environment']}}");
        Files.writeString(job, yaml);
        Cli run = jobs.runInProcess(job);
        assertThat(run.code()).as(run.err()).isZero();
        List<String> n1 = Files.readAllLines(seen.resolve("n1"));
        List<String> n2 = Files.readAllLines(seen.resolve("n2"));
        assertThat(n1.get(0)).isNotEqualTo(n2.get(0)).isNotEqualTo("/tmp").isNotEmpty();
        assertThat(n1.get(1)).isEqualTo("700");
        assertThat(n2.get(1)).isEqualTo("700");
        assertThat(Path.of(n1.get(0))).as("removed once the setup ended").doesNotExist();
        assertThat(Path.of(n2.get(0))).doesNotExist();
    }

    @Test
    void aScriptThatImportsTorchFailsPreflightWhereTheWorkersPythonHasNone() throws Exception {
        Path venv = tmp.resolve("envs/notorch");
        Process mk = new ProcessBuilder("python3", "-m", "venv", "--without-pip", venv.toString()).inheritIO().start();
        assertThat(mk.waitFor()).isZero();
        LocalJobs jobs = new LocalJobs(tmp);
        Path job = jobs.job("notorch", "culprit.py", 1, 2, Map.of(), 2, 0);
        Files.writeString(job, Files.readString(job) + "environment: {venv: " + venv + "}\n");
        Cli run = jobs.runInProcess(job);
        assertThat(run.code()).as(run.err()).isEqualTo(3);
        assertThat(run.out() + run.err()).contains("FAIL n1 program: python3 -> " + venv.resolve("bin/python3")).contains(") has no torch, and"
                + " culprit.py imports it: install torch for it (Debian: apt-get install python3-torch), or name an environment that has it");
        assertThat(run.out() + run.err()).doesNotContain("Traceback").doesNotContain("ModuleNotFoundError");
    }
}
