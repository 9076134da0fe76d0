package org.runjob.testbed;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** This JVM's environment with HOME in a test's own folder ({@code DIR/home}), so runjob's cache and ~/.runjob stay there. */
public final class HomeEnv {

    private HomeEnv() {
    }

    /** A new, changeable copy of this JVM's environment with HOME at {@code dir/home} (made). */
    public static Map<String, String> in(Path dir) throws IOException {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("HOME", Files.createDirectories(dir.resolve("home")).toString());
        return env;
    }
}
