package org.runjob.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.agent.ProcInfo;
import org.runjob.logs.Coordinator;
import org.runjob.report.StatusJson;
import org.runjob.run.ExitCode;

import tools.jackson.databind.json.JsonMapper;

/** {@code runjob stop} signals a run's coordinator only: never a process a status.json merely names. */
class StopTest {

    private static final String RUN = "20261201-070000-ab12";

    @TempDir
    Path logs;

    private Process bystander;

    @AfterEach
    void end() {
        if (bystander != null) {
            bystander.destroyForcibly();
        }
    }

    /** A run folder whose status.json names {@code pid} with its true start time, as an edited one would. */
    private Path folderNaming(long pid) throws Exception {
        Path folder = Files.createDirectories(logs.resolve("job").resolve(RUN));
        long ticks = ProcInfo.stat(pid).orElseThrow().startTicks();
        var status = StatusJson.of(RUN, "job", "running", 0, new Coordinator(pid, ticks, ProcInfo.hostname()),
                Instant.EPOCH, Instant.EPOCH, List.of());
        Files.writeString(folder.resolve("status.json"), JsonMapper.builder().build().writeValueAsString(status));
        Files.writeString(folder.resolve("runjob.log"), "");
        return folder;
    }

    @Test
    void aLiveProcessThatIsNotTheRunsRunjobIsNotSignalled() throws Exception {
        bystander = new ProcessBuilder("sleep", "60").start();
        folderNaming(bystander.pid());
        Cli r = Cli.run(Map.of(), "stop", RUN, "--logs-dir", logs.toString(), "--wait", "1");
        assertThat(r.code()).isEqualTo(ExitCode.INVALID);
        assertThat(r.err()).isEqualTo("runjob: run " + RUN + ": its status.json names pid " + bystander.pid()
                + ", which is not this run's runjob (its command line is not runjob's): nothing was signalled\n");
        assertThat(bystander.isAlive()).isTrue();
    }

    @Test
    void aRunjobThatDoesNotHoldTheRunsLogIsNotSignalledEither() throws Exception {
        // a runjob process (this JVM runs org.runjob classes, but under the test runner's command line): start one for real
        String java = ProcessHandle.current().info().command().orElseThrow();
        bystander = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), "org.runjob.cli.Main", "agent")
                .start(); // an agent: it waits on its stdin, holding no run's log
        Path folder = folderNaming(bystander.pid());
        Cli r = Cli.run(Map.of(), "stop", RUN, "--logs-dir", logs.toString(), "--wait", "1");
        assertThat(r.code()).isEqualTo(ExitCode.INVALID);
        assertThat(r.err()).endsWith("(it does not hold the run's runjob.log open): nothing was signalled\n");
        assertThat(bystander.isAlive()).isTrue();
        assertThat(folder.resolve("summary.json")).doesNotExist();
    }
}
