package org.runjob.session;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.runjob.distribute.AgentBundle;
import org.runjob.distribute.Sha256;
import org.runjob.protocol.NodeJvm;

/**
 * A jar runjob starts from, pinned by content on this side too: the agent artifact that nodes and
 * local agents run ({@link #agent}), and runjob's whole jar for a runjob that lives on its own (a
 * detached or queued run, a submitted run's coordinator: {@link #runjob}). The first use copies it
 * ({@link AgentBundle}) into this user's cache as {@code SHA256.jar} (the cache the local nodes'
 * bootstrap uses: {@code ${XDG_CACHE_HOME:-~/.cache}/runjob/agents}), and everything after (jar
 * transfers, local agents, restarts, a detached runjob) uses that copy. A rebuild that replaces
 * {@code target/runjob.jar} under a running run changes nothing the run starts.
 *
 * <p>A new copy is hashed after it was made, so the name always matches the bytes; a jar pinned
 * before is used as it is (the user's own cache, which nobody else can write; nodes and the
 * bootstrap check what they run by its SHA-256 anyway). When the cache
 * cannot be used (not this user's, writable by others), a private temporary directory holds it.
 *
 * @param main the main class a node starts it with ({@link NodeJvm#AGENT_MAIN} or {@link NodeJvm#RUNJOB_MAIN})
 */
public record PinnedJar(Path path, String sha256, long size, String main) {

    private static PinnedJar agent;
    private static PinnedJar runjob;
    /** How long a jar nothing pinned again stays in this user's cache. */
    static final int KEEP_DAYS = 14;

    /** The agent artifact, copied and hashed once per process. */
    public static synchronized PinnedJar agent() throws IOException {
        if (agent == null) {
            agent = pinOwn("agent", AgentBundle::agentJar, NodeJvm.AGENT_MAIN);
        }
        return agent;
    }

    /** runjob's whole jar (this process's), copied and hashed once per process. */
    public static synchronized PinnedJar runjob() throws IOException {
        if (runjob == null) {
            runjob = pinOwn("runjob", AgentBundle::runjobJar, NodeJvm.RUNJOB_MAIN);
        }
        return runjob;
    }

    /** The JDK modules a node without java needs to run this jar: runjob's own for runjob's jar, else the agent's. */
    List<String> runtimeModules() {
        return main.equals(NodeJvm.RUNJOB_MAIN) ? NodeRuntime.RUNJOB_MODULES : NodeRuntime.MODULES;
    }

    /** Makes a jar (AgentBundle's). */
    interface JarMaker {
        Path make() throws IOException;
    }

    /** One of runjob's own jars, pinned into this user's cache: from runjob's jar as it is, from class directories once per class path state. */
    private static PinnedJar pinOwn(String kind, JarMaker jar, String main) throws IOException {
        Path dir = cacheDir(System.getenv());
        return AgentBundle.runsFromJar() ? pinMade(jar.make(), dir, main) : pinMerged(kind, jar, main, dir, System.getProperty("java.class.path"));
    }

    /**
     * A jar merged from class directories (tests, an IDE), merged once per state of the class path:
     * the cache keeps a file {@code classpath-KIND-KEY} that names the SHA-256 of the jar pinned
     * for the class path whose entries (every file of a directory) have the paths, sizes and
     * times KEY hashes. A later process with the same class path uses that jar without merging
     * again (1.75 s for runjob's whole jar); a rebuilt class changes KEY.
     *
     * @param dir       the cache ({@link #cacheDir}); when it is unsafe the jar is merged and pinned as {@link #pin} does
     * @param classPath the class path {@code merge} merges
     */
    static PinnedJar pinMerged(String kind, JarMaker merge, String main, Path dir, String classPath) throws IOException {
        if (!safe(dir)) {
            return pinMade(merge.make(), dir, main);
        }
        Path note = dir.resolve("classpath-" + kind + "-" + classPathKey(classPath));
        if (Files.isRegularFile(note, LinkOption.NOFOLLOW_LINKS)) {
            String sha = Files.readString(note).trim();
            Path pinned = dir.resolve(sha + ".jar");
            if (sha.matches("[0-9a-f]{64}") && Files.isRegularFile(pinned, LinkOption.NOFOLLOW_LINKS)) {
                FileTime now = FileTime.fromMillis(System.currentTimeMillis());
                Files.setLastModifiedTime(pinned, now);
                Files.setLastModifiedTime(note, now);
                return new PinnedJar(pinned, sha, Files.size(pinned), main);
            }
        }
        PinnedJar made = pinMade(merge.make(), dir, main);
        Path tmp = Files.createTempFile(dir, ".classpath-", "", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            Files.writeString(tmp, made.sha256() + "\n");
            Files.move(tmp, note, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp);
        }
        return made;
    }

    /** SHA-256 of every class path entry's path, and of each file's path, size and time (a directory's, in name order). */
    static String classPathKey(String classPath) throws IOException {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        for (String entry : classPath.split(File.pathSeparator)) {
            Path p = Path.of(entry);
            sha.update((entry + "\n").getBytes(StandardCharsets.UTF_8));
            if (Files.isDirectory(p)) {
                try (Stream<Path> files = Files.walk(p)) {
                    for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                        sha.update((p.relativize(f) + " " + Files.size(f) + " " + Files.getLastModifiedTime(f).toMillis() + "\n")
                                .getBytes(StandardCharsets.UTF_8));
                    }
                }
            } else if (Files.isRegularFile(p)) {
                sha.update((Files.size(p) + " " + Files.getLastModifiedTime(p).toMillis() + "\n").getBytes(StandardCharsets.UTF_8));
            }
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    /** Pins {@code jar} into {@code dir} ({@link #pin}), then deletes it when AgentBundle made it for this call. */
    static PinnedJar pinMade(Path jar, Path dir, String main) throws IOException {
        try {
            return pin(jar, dir, main);
        } finally {
            if (AgentBundle.isTemporary(jar)) {
                Files.deleteIfExists(jar);
            }
        }
    }

    /** Copies {@code jar} into {@code dir} (or a private temporary directory when {@code dir} is unsafe) as SHA256.jar. */
    static PinnedJar pin(Path jar, Path dir, String main) throws IOException {
        Path into = safe(dir) ? dir : Files.createTempDirectory("runjob-agents-");
        // pinned before (every run of one build after the first): no second copy, only the date prune goes by
        String sha = Sha256.ofSource(jar);
        Path pinned = into.resolve(sha + ".jar");
        if (Files.isRegularFile(pinned, LinkOption.NOFOLLOW_LINKS) && Files.size(pinned) == Files.size(jar)) {
            Files.setLastModifiedTime(pinned, FileTime.fromMillis(System.currentTimeMillis()));
            prune(into, pinned);
            return new PinnedJar(pinned, sha, Files.size(pinned), main);
        }
        Path tmp = Files.createTempFile(into, ".agent-", ".jar", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            try (OutputStream out = Files.newOutputStream(tmp)) { // into the file made mode 600 above
                Files.copy(jar, out);
            }
            String copied = Sha256.of(tmp); // the copy's own: the jar may have been rebuilt meanwhile
            Path named = into.resolve(copied + ".jar");
            try {
                Files.move(tmp, named, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, named, StandardCopyOption.REPLACE_EXISTING);
            }
            prune(into, named);
            return new PinnedJar(named, copied, Files.size(named), main);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** Jars older than {@link #KEEP_DAYS} days (and their class-data archives, checksums and class path notes) go: every build adds one. */
    private static void prune(Path dir, Path current) {
        long before = System.currentTimeMillis() - TimeUnit.DAYS.toMillis(KEEP_DAYS);
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "{*.jar,*.jsa,*.sum,classpath-*}")) {
            for (Path f : files) {
                if (!f.getFileName().toString().startsWith(current.getFileName().toString().replace(".jar", ""))
                        && Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)
                        && Files.getLastModifiedTime(f, LinkOption.NOFOLLOW_LINKS).toMillis() < before) {
                    Files.deleteIfExists(f);
                }
            }
        } catch (IOException e) {
            // the next pin tries again
        }
    }

    /** The bootstrap's cache of agent jars for this user: {@code ${XDG_CACHE_HOME:-~/.cache}/runjob/agents}. */
    static Path cacheDir(Map<String, String> env) {
        String cache = env.getOrDefault("XDG_CACHE_HOME", "");
        Path base = cache.isEmpty() ? Path.of(env.getOrDefault("HOME", System.getProperty("user.home")), ".cache") : Path.of(cache);
        return base.resolve("runjob").resolve("agents");
    }

    /**
     * Creates {@code dir} (mode 700) when missing; true when it and its parent ({@code runjob}) are
     * directories of this user's, not links, that nobody else can write: the bootstrap's own rule.
     */
    private static boolean safe(Path dir) {
        try {
            Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            for (Path p : new Path[] {dir.getParent(), dir}) {
                if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    return false;
                }
                int mode = ((Number) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS)).intValue();
                int uid = ((Number) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS)).intValue();
                int me = ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue();
                if (uid != me || (mode & 022) != 0) {
                    return false;
                }
            }
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }
}
