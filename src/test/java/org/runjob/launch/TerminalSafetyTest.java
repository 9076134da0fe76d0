package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;

/**
 * Text a node sends (its torch version, its setup's output) reaches runjob's own lines and records
 * with every control character escaped, so it cannot retitle the window, clear the screen or write
 * the clipboard; a worker's own output lines still pass as the worker wrote them.
 */
class TerminalSafetyTest {

    /** A window title, a clipboard write (OSC 52), a screen clear. */
    private static final String HOSTILE = "\u001b]0;pwned\u0007\u001b]52;c;cHduZWQ=\u0007\u001b[2J";
    private static final String SHOWN = "\\x1b]0;pwned\\x07\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J";

    @TempDir
    Path tmp;

    @Test
    void aNodesTorchVersionAndSetupOutputArePrintedAndRecordedEscapedWhileWorkerLinesPassAsWritten() throws Exception {
        Path site = Files.createDirectories(tmp.resolve("site/torch"));
        Files.writeString(site.resolve("__init__.py"), "");
        Files.writeString(site.resolve("version.py"), "__version__ = '2.9.0" + HOSTILE + "'\ncuda = None\n");
        LocalJobs jobs = new LocalJobs(tmp);
        Path job = jobs.job("escapes", "escapes.py", 1, 1, Map.of("PYTHONPATH", tmp.resolve("site").toString()), 2, 0);
        Files.writeString(job, Files.readString(job) + "environment: {setup: [\"printf 'setting up" + HOSTILE.replace("\u001b", "\\\\033")
                .replace("\u0007", "\\\\007") + "\\\\n'\"]}\n");
        Cli run = jobs.runInProcess(job);
        assertThat(run.code()).as(run.err()).isZero();
        assertThat(run.err()).contains("[n1/setup] setting up" + SHOWN);
        assertThat(run.err().chars().filter(c -> c == 0x1b || c == 0x07).count()).as(run.err()).isZero();
        Path folder = jobs.runFolder("escapes");
        for (String record : List.of("events.jsonl", "summary.json", "status.json", "setup/n1.log")) {
            String text = Files.readString(folder.resolve(record), StandardCharsets.UTF_8);
            assertThat(text.chars().filter(c -> c == 0x1b || c == 0x07).count()).as(record + ": " + text).isZero();
        }
        assertThat(Files.readString(folder.resolve("setup/n1.log"))).isEqualTo("setting up" + SHOWN + "\n");
        assertThat(run.out()).contains("rank 0 says \u001b[1mbold\u001b[0m");

        Cli check = Cli.run(System.getenv(), "check", job.toString());
        assertThat(check.code()).as(check.err()).isZero();
        String shown = check.out() + check.err();
        assertThat(shown).contains("torch 2.9.0" + SHOWN);
        assertThat(shown.chars().filter(c -> c == 0x1b || c == 0x07).count()).as(shown).isZero();
    }
}
