package org.runjob.report;

import java.io.IOException;
import java.io.InputStream;
import java.util.Optional;
import java.util.Properties;

/**
 * What Maven wrote into the jar about this build: the version, the git commit (and whether the
 * tree had changes), and when it was built. A value the build could not fill (no git, classes run
 * from an IDE) is empty.
 */
public record BuildInfo(String version, Optional<String> commit, boolean dirty, Optional<String> built) {

    public static BuildInfo current() {
        Properties p = new Properties();
        try (InputStream in = BuildInfo.class.getResourceAsStream("/runjob-version.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            // an unreadable jar: every value unknown
        }
        return new BuildInfo(value(p, "version").orElse("unknown"), value(p, "commit"), value(p, "dirty").filter("true"::equals).isPresent(),
                value(p, "built"));
    }

    private static Optional<String> value(Properties p, String key) {
        return Optional.ofNullable(p.getProperty(key)).map(String::strip).filter(v -> !v.isEmpty() && !v.startsWith("${"));
    }

    /** {@code runjob 0.1.0 (commit 25d493b, with changes; built 2026-12-02T08:55:09Z)}. */
    public String line() {
        String commitText = commit.map(c -> "commit " + c + (dirty ? ", with changes" : "")).orElse("commit unknown");
        return "runjob " + version + " (" + commitText + built.map(b -> "; built " + b).orElse("") + ")";
    }
}
