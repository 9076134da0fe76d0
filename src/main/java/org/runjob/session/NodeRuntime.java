package org.runjob.session;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.distribute.Sha256;

/**
 * A Java runtime for nodes that have none, packed as a {@code .tgz} and kept in this user's cache
 * ({@code ${XDG_CACHE_HOME:-~/.cache}/runjob/runtimes/}), sent once per node, where the bootstrap
 * keeps it by its SHA-256. Where runjob runs on the runtime of its release archive (a
 * {@value #BUNDLED} file in it says so) that runtime is packed as it is: nothing is built. Otherwise
 * it is made once per JDK with {@code jlink} from this machine's JDK: one with only the modules the
 * agent and the GPU probe use, and, for a node that runs runjob itself (the coordinator of a
 * submitted run), one with runjob's modules.
 *
 * <p>It runs only on nodes of this machine's CPU architecture and C library; {@link #forNode}
 * says none for any other.
 */
record NodeRuntime(Path archive, String sha256, long size) {

    private static final Logger LOG = LogManager.getLogger(NodeRuntime.class);

    /** What the agent (and its GPU probe: Jackson wants java.xml) loads from the JDK. */
    static final List<String> MODULES = List.of("java.base", "java.logging", "java.xml", "jdk.unsupported");

    /**
     * What runjob's own classes load (jdeps of runjob.jar: Log4j wants java.desktop's java.beans,
     * java.management and java.naming), and jdk.crypto.ec, loaded by name (EC and Ed25519 SSH keys).
     */
    static final List<String> RUNJOB_MODULES = List.of("java.base", "java.compiler", "java.desktop", "java.logging", "java.management",
            "java.naming", "java.rmi", "java.scripting", "java.security.jgss", "java.sql", "java.xml", "jdk.crypto.ec", "jdk.unsupported");

    /** The file in a runtime that runjob's release build made: it has every module the agent needs. */
    static final String BUNDLED = "RUNJOB-RUNTIME";

    /** The runtimes made so far, by their module list. */
    private static final Map<List<String>, NodeRuntime> BUILT = new HashMap<>();

    /** This machine's architecture as {@code uname -m} names it. */
    static String arch() {
        String a = System.getProperty("os.arch");
        return switch (a) {
            case "amd64", "x86_64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default -> a;
        };
    }

    /** "musl" where this machine's C library is musl, else "glibc". */
    static String libc() {
        try (var s = Files.newDirectoryStream(Path.of("/lib"), "ld-musl-*")) {
            return s.iterator().hasNext() ? "musl" : "glibc";
        } catch (IOException e) {
            return "glibc";
        }
    }

    /**
     * The runtime for a node of {@code arch} and {@code libc} that runs {@code modules}' classes
     * ({@link #MODULES} or {@link #RUNJOB_MODULES}), built on first use; empty (with the reason
     * logged) when the node is of another kind or this JDK cannot make one.
     */
    static synchronized Optional<NodeRuntime> forNode(String node, String arch, String libc, Map<String, String> env, List<String> modules) {
        if (!arch.equals(arch()) || !libc.equals(libc())) {
            LOG.warn("node {}: no java there, and it is {}/{} where this machine is {}/{}: install a JRE >= 17 on it", node, arch, libc,
                    arch(), libc());
            return Optional.empty();
        }
        if (!BUILT.containsKey(modules)) {
            try {
                BUILT.put(modules, build(env, modules));
            } catch (IOException e) {
                LOG.warn("node {}: no java there, and no runtime could be made here: {}", node, e.getMessage());
                return Optional.empty();
            }
        }
        return Optional.of(BUILT.get(modules));
    }

    private static NodeRuntime build(Map<String, String> env, List<String> modules) throws IOException {
        Path home = Path.of(System.getProperty("java.home"));
        String cacheHome = env.getOrDefault("XDG_CACHE_HOME", env.getOrDefault("HOME", System.getProperty("user.home")) + "/.cache");
        Path dir = Files.createDirectories(Path.of(cacheHome, "runjob", "runtimes"));
        boolean bundled = Files.isRegularFile(home.resolve(BUNDLED));
        Path jlink = home.resolve("bin/jlink");
        if (!bundled && !Files.isExecutable(jlink)) {
            throw new IOException("this Java has no jlink (" + jlink + "): run runjob with a JDK, not a JRE");
        }
        // the bundled runtime's name changes with its contents (a new release unpacked in the same place)
        Path image = home.resolve("lib/modules");
        String kind = bundled ? "bundled-" + Files.size(image) + "-" + Files.getLastModifiedTime(image).toMillis() + "-"
                : modules.equals(MODULES) ? "" : "runjob-";
        Path archive = dir.resolve("jre-" + Runtime.version() + "-" + kind + arch() + "-" + libc() + ".tgz");
        if (!Files.isRegularFile(archive)) {
            Path work = Files.createTempDirectory(dir, ".build-");
            try {
                Path tgz = work.resolve("rt.tgz");
                if (bundled) {
                    // the archive's members are rt/...: the name the bootstrap unpacks
                    run(List.of("tar", "-czf", tgz.toString(), "-C", home.toString(), "--transform", "s,^\\.,rt,SH", "."));
                } else {
                    run(List.of(jlink.toString(), "--add-modules", String.join(",", modules), "--strip-debug", "--no-header-files",
                            "--no-man-pages", "--compress=0", "--generate-cds-archive", "--output", work.resolve("rt").toString()));
                    run(List.of("tar", "-czf", tgz.toString(), "-C", work.toString(), "rt"));
                }
                Files.move(tgz, archive, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } finally {
                run(List.of("rm", "-rf", work.toString()));
            }
            LOG.info("{} a runtime for nodes without java: {} ({} MiB)", bundled ? "packed runjob's own" : "made", archive,
                    Files.size(archive) >> 20);
        }
        return new NodeRuntime(archive, Sha256.ofSource(archive), Files.size(archive));
    }

    private static void run(List<String> argv) throws IOException {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!p.waitFor(300, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IOException(argv.get(0) + " failed: " + out.strip());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted");
        }
    }
}
