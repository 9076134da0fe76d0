package org.runjob.spec;

import java.nio.file.Path;

/** Where a shipped file comes from (relative to the file that names it) and lands (its own name in the workdir). */
final class Destinations {

    private Destinations() {
    }

    static Path resolve(Location writtenAt, String value) {
        Path p = Path.of(expandHome(value));
        return (p.isAbsolute() ? p : writtenAt.baseDirectory().resolve(p)).normalize();
    }

    static String of(Path source) {
        Path name = source.getFileName();
        return name == null ? source.toString() : name.toString();
    }

    private static String expandHome(String value) {
        if (value.equals("~") || value.startsWith("~/")) {
            return System.getProperty("user.home") + value.substring(1);
        }
        return value;
    }
}
