package org.runjob.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.Browser;
import org.runjob.testbed.FakeCuda;
import org.runjob.testbed.LabPage;
import org.runjob.testbed.OnSshTestbed;
import org.runjob.testbed.Poll;
import org.runjob.testbed.SshTestbed;
import org.runjob.testbed.Testbed;

import tools.jackson.databind.JsonNode;

/**
 * {@code runjob serve}'s servers on the SSH testbed with the stand-in driver: h1's two V100s, one
 * of them running another user's process (a real {@code sleep} of user nobody, in the stand-in
 * NVML's process list), h2's A30 leased by a detached run, h3 without GPUs.
 */
@OnSshTestbed
class LabServersTest {

    @TempDir
    Path tmp;

    ClusterJobs jobs;
    private Process foreign;
    private String runId;

    @BeforeEach
    void setUp() throws Exception {
        jobs = new ClusterJobs(tmp);
        FakeCuda.library();
    }

    @AfterEach
    void cleanUp() throws Exception {
        if (runId != null) {
            Cli.runNow(env(), "stop", runId);
        }
        if (foreign != null) {
            foreign.destroyForcibly();
            foreign.waitFor();
        }
        Files.deleteIfExists(jobs.bed.nvmlProcesses(1));
        jobs.reconnectAll();
    }

    Map<String, String> env() {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("XDG_STATE_HOME", tmp.resolve("state").toString());
        return env;
    }

    @Test
    void theServersShowEveryGpuAndWhoHoldsItAndAGpuAnotherUserRunsOnIsNotPicked() throws Exception {
        Testbed.require(Testbed.runs("setpriv", "--version"), "setpriv (util-linux)");
        // another user's process on h1's first GPU in bus order, as the driver would list it
        foreign = new ProcessBuilder("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "sleep", "600").start();
        Files.writeString(jobs.bed.nvmlProcesses(1), "0 " + foreign.pid() + " 300\n");
        SshTestbed.Host h1 = jobs.bed.host(1);
        SshTestbed.Host h2 = jobs.bed.host(2);
        SshTestbed.Host h3 = jobs.bed.host(3);
        Path lab = jobs.job("lab", jobs.gpuNode(h1) + jobs.gpuNode(h2) + jobs.node(h3, 1), List.of(), List.of("true"), "", Map.of());
        // a run that holds h2's GPU, sampled every second
        Path holder = jobs.job("holder", jobs.gpuNode(h2), jobs.worker("sleeper.py"), List.of("python3", "sleeper.py"),
                "observe: {interval_s: 1}\n", Map.of());
        Cli detached = Cli.runNow(env(), "--detach", holder.toString());
        assertThat(detached.code()).as(detached.err()).isZero();
        runId = detached.out().strip();
        jobs.awaitPids(1, Duration.ofSeconds(60));

        try (LabPage page = LabPage.start(tmp.resolve("serve"), env(), List.of("serve", "--port", "0", "--interval", "1", lab.toString()))) {
            Poll.until(() -> sampled(page), Duration.ofSeconds(90), "every server sampled", () -> text(page));
            Map<String, JsonNode> servers = new HashMap<>();
            page.json("/api/servers").path("servers").forEach(s -> servers.put(s.path("server").asString(), s));
            JsonNode g0 = servers.get("h1").path("gpus").get(0);
            assertThat(g0.path("name").asString()).isEqualTo("Tesla V100-PCIE-16GB");
            assertThat(g0.path("holder").path("kind").asString()).isEqualTo("process");
            assertThat(g0.path("holder").path("user").asString()).isEqualTo("nobody");
            assertThat(g0.path("holder").path("text").asString()).isEqualTo("nobody: sleep 600 (pid " + foreign.pid() + ")");
            assertThat(g0.path("processes").get(0).path("used_mib").asInt()).isEqualTo(300);
            assertThat(servers.get("h1").path("gpus").get(1).path("holder").path("kind").asString()).isEqualTo("free");
            JsonNode a30 = servers.get("h2").path("gpus").get(0);
            assertThat(a30.path("holder").path("kind").asString()).isEqualTo("run");
            assertThat(a30.path("holder").path("run_id").asString()).isEqualTo(runId);
            assertThat(a30.path("holder").path("user").asString()).isEqualTo("root");
            Poll.until(() -> ranksOnH2(page).equals("[0]"), Duration.ofSeconds(30), "the holding run's rank on h2's GPU", () -> text(page));
            assertThat(servers.get("h3").path("state").asString()).isEqualTo("no GPUs");
            assertThat(servers.get("h3").path("why").asString()).isEqualTo("no CUDA device (the driver found no GPU)");

            try (Browser b = Browser.start(tmp.resolve("chromium"))) {
                b.open(page.url());
                String row = "document.querySelector('tr[data-server=\"h1\"][data-gpu=\"0\"]')";
                b.until(row + " && " + row + ".getAttribute('data-holder') === 'process'", Duration.ofSeconds(30), "h1's GPU 0 on the page");
                assertThat(b.eval(row + ".cells[7].textContent").asString()).isEqualTo("nobody: sleep 600 (pid " + foreign.pid() + ")");
                Path docs = Path.of("docs", "img");
                if (Files.isDirectory(docs) && System.getenv("RUNJOB_DOC_PICTURES") != null) {
                    b.until("document.body.getAttribute('data-runs') !== null", Duration.ofSeconds(30), "the runs");
                    b.screenshot(docs.resolve("serve-front.png").toAbsolutePath(), 1200, 520);
                }
            }
        }

        // runjob gpus names the process, and a count of one picks the other GPU
        Cli gpus = Cli.run(env(), "gpus", lab.toString());
        assertThat(gpus.out()).contains("h1                 0  Tesla V100-PCIE-16GB           16.0 GiB   16.0 GiB  7.0   00000000:3B:00.0  "
                + "nobody: sleep 600 (pid " + foreign.pid() + ", 300 MiB)\n");
        Path one = jobs.job("one", "  - {name: h1, host: " + h1.address() + ", port: " + h1.port() + ", user: root, gpus: {count: 1}, workdir: "
                + tmp.resolve("work-one") + "}\n", List.of(), List.of("python3", "-c", "'import os; print(os.environ[\"CUDA_VISIBLE_DEVICES\"])'"),
                "", Map.of());
        Cli picked = jobs.run(one);
        assertThat(picked.code()).as(picked.err()).isZero();
        assertThat(picked.out()).isEqualTo("[h1/0] 1\n");
        Cli two = jobs.run(jobs.job("two", "  - {name: h1, host: " + h1.address() + ", port: " + h1.port() + ", user: root, gpus: {count: 2}, "
                + "workdir: " + tmp.resolve("work-two") + "}\n", List.of(), List.of("true"), "", Map.of()));
        assertThat(two.code()).isEqualTo(3);
        assertThat(two.err()).contains("GPU 0: in use by nobody: sleep 600 (pid " + foreign.pid() + ", 300 MiB)");
        assertThat(foreign.isAlive()).isTrue();
        foreign.destroy();
        assertThat(foreign.waitFor(10, TimeUnit.SECONDS)).isTrue();
    }

    private static boolean sampled(LabPage page) {
        try {
            int up = 0;
            for (JsonNode s : page.json("/api/servers").path("servers")) {
                boolean done = s.path("state").asString().equals("no GPUs")
                        || s.path("state").asString().equals("up") && s.path("time").isString();
                up += done ? 1 : 0;
            }
            return up == 3;
        } catch (Exception e) {
            return false;
        }
    }

    private static String ranksOnH2(LabPage page) {
        try {
            for (JsonNode s : page.json("/api/servers").path("servers")) {
                if (s.path("server").asString().equals("h2")) {
                    return s.path("gpus").get(0).path("holder").path("ranks").toString();
                }
            }
        } catch (Exception e) {
            return e.toString();
        }
        return "";
    }

    private static String text(LabPage page) {
        try {
            return page.get("/api/servers").body();
        } catch (Exception e) {
            return e.toString();
        }
    }
}
