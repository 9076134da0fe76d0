package org.runjob.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;

/** Non-ASCII arguments reach a local worker intact even when runjob runs without a locale (as under cron or a bare CI). */
class LocaleTest {

    @TempDir
    Path tmp;

    @Test
    void nonAsciiArgumentsSurviveAnEnvironmentWithoutALocale() throws Exception {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.remove("LANG");
        env.remove("LC_ALL");
        env.remove("LC_CTYPE");
        Path job = Files.writeString(tmp.resolve("l.yaml"), "name: l\nnodes: [{name: n, local: true, workers: 1}]\n"
                + "entrypoint: {command: [python3, -c, 'import sys; print(sys.argv[1] == \"训练 naïve\")', '训练 naïve']}\n"
                + "logs: {dir: " + tmp.resolve("runs") + "}\n");
        Cli r = Cli.run(env, job.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("[n/0] True\n");
    }
}
