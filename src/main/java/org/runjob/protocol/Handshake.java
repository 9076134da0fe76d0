package org.runjob.protocol;

import java.util.Optional;

/**
 * The agent's HELLO as a version check: it names the protocol the agent speaks
 * ({@link NodeFacts#PROTOCOL}) and the SHA-256 of the jar it runs ({@link NodeFacts#JAR}); the
 * coordinator refuses an agent that differs in either, by name, before it sends any request.
 */
public final class Handshake {

    /** This build's protocol. Raise it with any change to a frame id or payload. */
    public static final int VERSION = 5;

    private Handshake() {
    }

    /**
     * Why an agent whose HELLO carried {@code facts} must not be spoken to by a coordinator of
     * protocol {@link #VERSION} that started it from the jar {@code expectedJar}; empty when it may.
     */
    public static Optional<String> mismatch(NodeFacts facts, String expectedJar) {
        String protocol = facts.get(NodeFacts.PROTOCOL).orElse("none");
        String jar = facts.get(NodeFacts.JAR).orElse("none");
        if (!protocol.equals(Integer.toString(VERSION)) || !jar.equals(expectedJar)) {
            return Optional.of("its agent speaks protocol " + protocol + " from jar " + shortSha(jar) + ", but this runjob speaks protocol "
                    + VERSION + " and sent jar " + shortSha(expectedJar) + ": runjob and its agent are different builds");
        }
        return Optional.empty();
    }

    private static String shortSha(String sha) {
        return sha.length() > 12 ? sha.substring(0, 12) : sha;
    }
}
