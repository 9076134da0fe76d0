package org.runjob.testbed;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Debian's headless Chromium, for what a browser shows: a page loaded from a file, its scripts
 * run, and the DOM they leave dumped, with every console message the page logged (an uncaught
 * error, a request its Content-Security-Policy refused).
 */
public final class Chromium {

    private Chromium() {
    }

    /** The rendered page and its console messages. */
    public record Page(String dom, List<String> console) {
    }

    private static String binary() {
        for (String b : List.of("/usr/bin/chromium", "/usr/bin/chromium-browser")) {
            if (Files.isExecutable(Path.of(b))) {
                return b;
            }
        }
        return null;
    }

    /** Loads {@code html} headless and returns what its scripts made of it. */
    public static Page render(Path html, Path profile) throws IOException, InterruptedException {
        String chromium = binary();
        Testbed.require(chromium != null, "headless Chromium (Debian: chromium)");
        Path err = Files.createTempFile("chromium-", ".log");
        try {
            Process p = new ProcessBuilder(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0", "--dump-dom", html.toUri().toString())
                    .redirectError(err.toFile()).start();
            String dom = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("chromium did not finish within 60 s");
            }
            List<String> console = new ArrayList<>();
            for (String line : Files.readAllLines(err)) {
                if (line.contains(":CONSOLE")) {
                    console.add(line);
                }
            }
            return new Page(dom, console);
        } finally {
            Files.deleteIfExists(err);
        }
    }

    /** A PNG of {@code html} as it renders at {@code width} x {@code height}. */
    public static void screenshot(Path html, Path png, int width, int height, Path profile) throws IOException, InterruptedException {
        String chromium = binary();
        Testbed.require(chromium != null, "headless Chromium (Debian: chromium)");
        Process p = new ProcessBuilder(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
                "--user-data-dir=" + profile, "--window-size=" + width + "," + height, "--screenshot=" + png, html.toUri().toString())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("chromium did not finish within 60 s");
        }
    }
}
