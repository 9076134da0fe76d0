package org.runjob.launch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.runjob.distribute.AgentBundle;
import org.runjob.distribute.Sha256;

/** The jar remote agents run, with the SHA-256 nodes cache it under and verify it by. */
public record AgentJar(Path path, String sha256, long size) {

    private static AgentJar current;

    /** This process's agent jar ({@link AgentBundle}), hashed once. */
    public static synchronized AgentJar current() throws IOException {
        if (current == null) {
            Path jar = AgentBundle.jar();
            current = new AgentJar(jar, Sha256.ofSource(jar), Files.size(jar));
        }
        return current;
    }
}
