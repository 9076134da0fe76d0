package org.runjob.agent;

import java.nio.file.Path;
import java.util.Map;

/** Where a job's workdir is on a node: {@code ~} and relative paths are under the node user's home. */
public final class Workdirs {

    private Workdirs() {
    }

    public static Path resolve(String workdir, Map<String, String> env) {
        Path home = Path.of(env.getOrDefault("HOME", System.getProperty("user.home")));
        if (workdir.equals("~")) {
            return home;
        }
        if (workdir.startsWith("~/")) {
            return home.resolve(workdir.substring(2)).normalize();
        }
        Path p = Path.of(workdir);
        return (p.isAbsolute() ? p : home.resolve(p)).normalize();
    }
}
