package org.runjob.distribute;

import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.regex.Pattern;
import java.util.zip.Deflater;

/**
 * The jars runjob starts outside its own process. {@link #agentJar}: the agent artifact, all that
 * nodes and local agents run ({@link #AGENT_ENTRIES}: the {@code agent}, {@code protocol}, {@code runtime}
 * and {@code observe} packages with their service lines, Commons Exec, JCuda and JNA; no JSON, SSH, YAML, schema, CLI or logging framework).
 * The build makes it ({@code pom.xml}: the {@code agent} shade execution) and puts it in runjob's
 * jar as {@value #EMBEDDED}. {@link #runjobJar}: runjob's whole jar, for a runjob that
 * lives on its own. When this process runs from class directories (tests, an IDE), each is merged
 * from its class path; a jar without an embedded agent (such a merged one) gives its agent's
 * entries. A jar made here is a new temporary file for its caller alone ({@link #isTemporary}),
 * which the caller deletes once it has copied it: a process killed later leaves none behind.
 */
public final class AgentBundle {

    /**
     * What the agent artifact holds: entry names starting so. {@code pom.xml}'s agent shade
     * execution includes the same (AgentBundleTest compares them).
     */
    public static final List<String> AGENT_ENTRIES = List.of("org/runjob/agent/", "org/runjob/protocol/", "org/runjob/runtime/",
            "META-INF/services/org.runjob.runtime.WorkerRuntime", "org/runjob/observe/", "META-INF/services/org.runjob.observe.Source",
            "org/apache/commons/exec/", "jcuda/", "lib/libJCudaDriver-", "com/sun/jna/");
    /** Where the agent artifact is in runjob's jar. */
    public static final String EMBEDDED = "META-INF/runjob/agent.jar";
    /** How the name of every jar made here begins. */
    private static final String MADE = "runjob-made-";
    /** Service registrations: the same name in several jars is one file of all their lines (Log4j finds its provider so). */
    private static final String SERVICES = "META-INF/services/";
    /** Log4j's plugin index, which only log4j-core has: a runjob started from the merged jar logs as from the real one. */
    private static final String LOG4J_PLUGINS = "META-INF/org/apache/logging/log4j/";
    /** Jars of a test class path that nothing runjob starts needs (the test framework and its assertions). */
    private static final Pattern TEST_LIBRARIES = Pattern.compile("^(junit|assertj|byte-buddy|opentest4j|apiguardian)");
    /** Every merged entry's time: 1980-01-01, the first a zip entry can hold. */
    private static final long FIXED_TIME = 315_532_800_000L;

    private AgentBundle() {
    }

    /** runjob's whole jar: the one this process runs from, else a new one merged from its class path. */
    public static Path runjobJar() throws IOException {
        Optional<Path> self = self();
        return self.isPresent() ? self.get() : merge(System.getProperty("java.class.path"), name -> true);
    }

    /** The agent artifact: a new copy of the one in runjob's jar, else a new one of the agent's entries of this process's jar or class path. */
    public static Path agentJar() throws IOException {
        Optional<Path> self = self();
        if (self.isPresent()) {
            Optional<Path> inner = embedded(self.get());
            if (inner.isPresent()) {
                return inner.get();
            }
        }
        return merge(self.map(Path::toString).orElse(System.getProperty("java.class.path")), AgentBundle::inAgent);
    }

    /** Whether {@code jar} was made here for its caller alone (to delete once copied), not runjob's own jar. */
    public static boolean isTemporary(Path jar) {
        return jar.getFileName().toString().startsWith(MADE);
    }

    /** True when this process runs from runjob's jar (not from class directories). */
    public static boolean runsFromJar() {
        return self().isPresent();
    }

    /** Whether the agent artifact holds the entry {@code name}. */
    static boolean inAgent(String name) {
        return AGENT_ENTRIES.stream().anyMatch(name::startsWith);
    }

    private static Optional<Path> self() {
        try {
            Path self = Path.of(AgentBundle.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (Files.isRegularFile(self) && self.toString().endsWith(".jar")) {
                return Optional.of(self);
            }
        } catch (URISyntaxException | SecurityException e) {
            // not from a jar
        }
        return Optional.empty();
    }

    /** {@link #EMBEDDED} of {@code jar} as a new temporary file; empty when {@code jar} has none (a merged one). */
    private static Optional<Path> embedded(Path jar) throws IOException {
        try (JarFile in = new JarFile(jar.toFile())) {
            JarEntry inner = in.getJarEntry(EMBEDDED);
            if (inner == null) {
                return Optional.empty();
            }
            Path out = Files.createTempFile(MADE, ".jar");
            out.toFile().deleteOnExit();
            try (InputStream s = in.getInputStream(inner)) {
                Files.copy(s, out, StandardCopyOption.REPLACE_EXISTING);
            }
            return Optional.of(out);
        }
    }

    /** One jar of the entries of {@code classPath} (directories and jars) that {@code keep} accepts. */
    private static Path merge(String classPath, Predicate<String> keep) throws IOException {
        Path out = Files.createTempFile(MADE, ".jar");
        out.toFile().deleteOnExit();
        Set<String> seen = new HashSet<>();
        Map<String, StringBuilder> services = new TreeMap<>();
        try (JarOutputStream jar = new JarOutputStream(Files.newOutputStream(out))) {
            // made for one command and deleted once copied: fast to write matters more than small
            jar.setLevel(Deflater.BEST_SPEED);
            for (String entry : classPath.split(File.pathSeparator)) {
                Path p = Path.of(entry);
                if (Files.isDirectory(p)) {
                    Files.walkFileTree(p, new SimpleFileVisitor<>() {
                        @Override
                        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                            String name = p.relativize(file).toString().replace('\\', '/');
                            if (!keep.test(name)) {
                                return FileVisitResult.CONTINUE;
                            }
                            if (name.startsWith(SERVICES)) {
                                services.computeIfAbsent(name, k -> new StringBuilder())
                                        .append(Files.readString(file, StandardCharsets.UTF_8)).append('\n');
                            } else {
                                try (InputStream in = Files.newInputStream(file)) {
                                    copy(jar, seen, name, in);
                                }
                            }
                            return FileVisitResult.CONTINUE;
                        }
                    });
                } else if (Files.isRegularFile(p) && entry.endsWith(".jar") && !TEST_LIBRARIES.matcher(p.getFileName().toString()).find()) {
                    try (JarFile in = new JarFile(p.toFile())) {
                        for (JarEntry e : Collections.list(in.entries())) {
                            if (e.isDirectory() || !keep.test(e.getName())) {
                                continue;
                            }
                            if (e.getName().startsWith(SERVICES)) {
                                try (InputStream s = in.getInputStream(e)) {
                                    services.computeIfAbsent(e.getName(), k -> new StringBuilder())
                                            .append(new String(s.readAllBytes(), StandardCharsets.UTF_8)).append('\n');
                                }
                            } else if (e.getName().startsWith(LOG4J_PLUGINS) || !e.getName().startsWith("META-INF/")
                                    && !e.getName().equals("module-info.class") && !e.getName().matches("lib/libJ(NvPTXCompiler|Nvrtc|CudaRuntime)-.*")) {
                                try (InputStream s = in.getInputStream(e)) {
                                    copy(jar, seen, e.getName(), s);
                                }
                            }
                        }
                    }
                }
            }
            for (var service : services.entrySet()) {
                copy(jar, seen, service.getKey(), new ByteArrayInputStream(service.getValue().toString().getBytes(StandardCharsets.UTF_8)));
            }
        }
        return out;
    }

    private static void copy(JarOutputStream jar, Set<String> seen, String name, InputStream in) throws IOException {
        if (!seen.add(name)) {
            return;
        }
        JarEntry entry = new JarEntry(name);
        entry.setTime(FIXED_TIME); // the same classes make the same jar, so the same SHA-256: caches keep one copy
        jar.putNextEntry(entry);
        in.transferTo((OutputStream) jar);
        jar.closeEntry();
    }
}
