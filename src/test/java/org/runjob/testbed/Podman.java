package org.runjob.testbed;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Real podman for the container tests, with an image made here without any registry: a small
 * root file system (the usual top-level links into /usr, /etc/alternatives and the loader's cache)
 * imported with {@code podman import}; jobs mount the host's {@code /usr} read-only into it, so
 * the host's python3 and torch run inside. {@link #CONF} is the podman configuration every
 * testbed login gets (CONTAINERS_CONF): runc, and ulimits within this machine's own (its root
 * may not raise them).
 */
public final class Podman {

    public static final String IMAGE = "localhost/runjob-test:1";
    public static final Path CONF = Path.of("/tmp/runjob-test-containers.conf");
    private static boolean built;

    private Podman() {
    }

    /** Why the container tests cannot run here, or null when they can. */
    public static String missing() {
        if (!Files.isExecutable(Path.of("/usr/bin/podman"))) {
            return "podman (Debian: podman)";
        }
        if (!Files.isExecutable(Path.of("/usr/sbin/runc")) && !Files.isExecutable(Path.of("/usr/bin/runc"))) {
            return "runc (Debian: runc)";
        }
        return null;
    }

    /** Writes {@link #CONF}; idempotent. */
    public static synchronized void configure() throws IOException {
        Files.writeString(CONF, "[containers]\ndefault_ulimits = [\"nofile=8192:8192\", \"nproc=4096:4096\"]\n[engine]\nruntime = \"runc\"\n");
    }

    /** The test image, made once per test JVM. */
    public static synchronized String image() throws IOException, InterruptedException {
        if (!built) {
            configure();
            Path root = Files.createTempDirectory("runjob-rootfs-");
            for (String d : List.of("tmp", "usr", "run", "proc", "sys", "dev", "etc")) {
                Files.createDirectories(root.resolve(d));
            }
            for (String l : List.of("bin", "lib", "lib64", "sbin")) {
                Files.createSymbolicLink(root.resolve(l), Path.of("usr/" + l));
            }
            run("cp", "-a", "/etc/alternatives", root.resolve("etc").toString());
            run("cp", "/etc/ld.so.cache", "/etc/passwd", "/etc/group", root.resolve("etc").toString());
            Path tar = root.resolveSibling(root.getFileName() + ".tar");
            run("tar", "-C", root.toString(), "-cf", tar.toString(), ".");
            run("podman", "import", "-q", tar.toString(), IMAGE);
            run("rm", "-rf", root.toString(), tar.toString());
            built = true;
        }
        return IMAGE;
    }

    /** The ids of every container, running or exited, that carries {@code label}. */
    public static List<String> containers(String label) throws IOException, InterruptedException {
        List<String> out = new ArrayList<>();
        for (String line : run("podman", "ps", "-aq", "--filter", "label=" + label).split("\n")) {
            if (!line.isBlank()) {
                out.add(line.strip());
            }
        }
        return out;
    }

    private static String run(String... argv) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true);
        pb.environment().put("CONTAINERS_CONF", CONF.toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", argv) + " failed: " + out);
        }
        return out;
    }
}
