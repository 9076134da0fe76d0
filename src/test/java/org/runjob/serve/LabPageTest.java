package org.runjob.serve;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.Browser;
import org.runjob.testbed.Poll;
import org.runjob.testbed.RunjobProcess;

/**
 * {@code runjob serve} in headless Chromium, driven through the DevTools protocol: a detached run
 * of two local ranks whose rank 0 fails its first attempt (a restart), then ticks, writes
 * metrics and prints whatever the test asks it to.
 */
class LabPageTest {

    static final Path WORKERS = Path.of("src/test/resources/workers").toAbsolutePath();

    @TempDir
    Path tmp;

    private Process serve;
    private String runId;

    @AfterEach
    void end() throws Exception {
        if (runId != null) {
            Files.writeString(tmp.resolve("stop"), "");
            Cli.runNow(env(), "stop", runId, "--logs-dir", tmp.resolve("runs").toString());
        }
        if (serve != null) {
            serve.destroy();
            serve.waitFor();
        }
    }

    Map<String, String> env() {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("XDG_STATE_HOME", tmp.resolve("state").toString());
        return env;
    }

    /** Starts {@code runjob serve ARGS} and returns the URL it printed first. */
    static String serve(Path dir, Map<String, String> env, List<String> args, Process[] started) throws Exception {
        Files.createDirectories(dir);
        Process p = RunjobProcess.command(dir, "serve", env, args);
        started[0] = p;
        Path out = dir.resolve("serve.out");
        Poll.until(() -> firstLine(out).startsWith("http://"), Duration.ofSeconds(60), "serve's URL", () -> firstLine(dir.resolve("serve.err")));
        return firstLine(out);
    }

    static String firstLine(Path file) {
        try {
            return Files.isRegularFile(file) ? Files.readString(file).lines().findFirst().orElse("") : "";
        } catch (IOException e) {
            return "";
        }
    }

    Path job() throws Exception {
        return Files.writeString(tmp.resolve("lab.yaml"), String.join("\n",
                "name: lab",
                "nodes:",
                "  - {name: n1, local: true, workers: 2}",
                "entrypoint: {command: [python3, lab.py]}",
                "files: [" + WORKERS.resolve("lab.py") + ", " + WORKERS.resolve("common.py") + "]",
                "env: {SAY_FILE: " + tmp.resolve("say") + ", STOP_FILE: " + tmp.resolve("stop") + ", STEP_S: '0.2', MAX_STEPS: '3000'}",
                "failure: {max_restarts: 1, crash_loop_s: 0, grace_period_s: 2}",
                "workdir: " + tmp.resolve("work"),
                "logs: {dir: " + tmp.resolve("runs") + "}", ""));
    }

    @Test
    void theFrontPageListsARunningRunAndItsPageFollowsItLiveAsText() throws Exception {
        Cli detached = Cli.runNow(env(), "--detach", job().toString());
        assertThat(detached.code()).as(detached.err()).isZero();
        runId = detached.out().strip();
        Process[] p = new Process[1];
        String url = serve(tmp.resolve("serve"), env(), List.of("serve", "--port", "0", "--logs-dir", tmp.resolve("runs").toString()), p);
        serve = p[0];
        assertThat(url).matches("http://127\\.0\\.0\\.1:\\d+/\\?token=[0-9a-f]{48}");
        try (Browser b = Browser.start(tmp.resolve("chromium"))) {
            b.open(url);
            // the token went into a cookie and out of the address
            assertThat(b.eval("location.href").asString()).isEqualTo(url.substring(0, url.indexOf('?')));
            String row = "document.querySelector('tr[data-run-id=\"" + runId + "\"]')";
            b.until(row + " && " + row + ".getAttribute('data-state') === 'running'", Duration.ofSeconds(60), "run " + runId + " listed as running");
            assertThat(b.eval(row + ".cells[1].textContent").asString()).isEqualTo("lab");
            assertThat(b.eval(row + ".cells[3].textContent").asString()).isEqualTo("n1");

            b.open(url.substring(0, url.indexOf('?')) + "run/" + runId);
            b.until("document.getElementById('log').getAttribute('data-caught-up') === '1'", Duration.ofSeconds(30), "the log's backlog");
            // a line the worker prints now reaches the open page
            Files.writeString(tmp.resolve("say.tmp"), "hello from the test");
            Files.move(tmp.resolve("say.tmp"), tmp.resolve("say"));
            b.until("[...document.querySelectorAll('#log .logline')].some(d => d.textContent === '[n1/0#1] hello from the test')",
                    Duration.ofSeconds(30), "the worker's new line on the page");

            // markup a worker printed is shown as text, and runs nothing
            b.until("[...document.querySelectorAll('#log .logline')].some(d => d.textContent.startsWith('[n1/0#1] </script>'))",
                    Duration.ofSeconds(30), "the markup lines");
            assertThat(b.eval("[...document.querySelectorAll('#log .logline')].map(d => d.textContent).filter(t => t.includes('<')).join('\\n')")
                    .asString()).isEqualTo("[n1/0#1] <img src=x onerror=\"document.body.setAttribute('data-pwned', 'img')\">\n"
                    + "[n1/0#1] </script><script>document.body.setAttribute(\"data-pwned\", \"script\")</script>");
            assertThat(b.eval("document.querySelectorAll('#log img, #log script').length").asInt()).isZero();
            assertThat(b.eval("document.body.getAttribute('data-pwned')").isNull()).isTrue();

            // the loss curve gains points as the run goes on, and the restart is marked on it and on the timeline
            String points = "(document.querySelector('section.chart[data-metric=\"loss\"] path.line[data-rank=\"0\"]')||{getAttribute:()=>''})"
                    + ".getAttribute('d').split(/[ML]/).length - 1";
            b.until(points + " >= 5", Duration.ofSeconds(30), "the loss chart");
            int before = b.eval(points).asInt();
            b.until(points + " > " + before, Duration.ofSeconds(30), "the loss chart to gain points");
            assertThat(b.eval("document.querySelectorAll('section.chart[data-metric=\"loss\"] line.restart[data-attempt=\"1\"]').length").asInt())
                    .isEqualTo(1);
            b.until("document.querySelector('#timeline li[data-event=\"attempt_start\"][data-attempt=\"1\"]') !== null", Duration.ofSeconds(30),
                    "attempt 1 on the timeline");
            assertThat(b.eval("document.querySelector('#timeline li[data-event=\"attempt_end\"][data-attempt=\"0\"]').textContent").asString())
                    .contains("attempt_end: attempt 0, result failed");
            // progress and an ETA from the metrics' step and max_steps
            b.until("/^step \\d+ of 3000 \\(\\d+ %\\), [0-9.]+ steps\\/s, ETA /.test(document.getElementById('progress').textContent)",
                    Duration.ofSeconds(30), "progress with an ETA");
            // the rank filter: only rank 1's lines
            b.eval("(() => { const s = document.getElementById('rank'); s.value = '1'; s.dispatchEvent(new Event('change')); })()");
            b.until("document.querySelectorAll('#log .logline').length > 0 && [...document.querySelectorAll('#log .logline')]"
                    + ".every(d => d.textContent.startsWith('[n1/1#1] '))", Duration.ofSeconds(30), "rank 1's lines only");
            assertThat(b.console()).noneMatch(c -> c.contains("Content Security Policy") || c.startsWith("exception"));
            pictures(b, url);
        }
    }

    /** The docs' pictures of both views, when asked for (RUNJOB_DOC_PICTURES). */
    private void pictures(Browser b, String url) throws Exception {
        Path docs = Path.of("docs", "img");
        if (Files.isDirectory(docs) && System.getenv("RUNJOB_DOC_PICTURES") != null) {
            b.screenshot(docs.resolve("serve-run.png").toAbsolutePath(), 1200, 1500);
            b.open(url.substring(0, url.indexOf('?')));
            b.until("document.body.getAttribute('data-runs') !== null", Duration.ofSeconds(30), "the front page");
            b.screenshot(docs.resolve("serve-front.png").toAbsolutePath(), 1200, 500);
        }
    }
}
