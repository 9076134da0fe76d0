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
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Collections;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;

/**
 * The jar that is shipped to nodes to run the agent (and a submitted run's coordinator): the runjob
 * jar this process runs from, or, when it runs from class directories (tests, an IDE), one jar
 * merged from its class path, built once per process.
 */
public final class AgentBundle {

    private static Path built;
    /** Service registrations: the same name in several jars is one file of all their lines (Log4j finds its provider so). */
    private static final String SERVICES = "META-INF/services/";
    /** Log4j's plugin index, which only log4j-core has: a runjob started from the merged jar logs as from the real one. */
    private static final String LOG4J_PLUGINS = "META-INF/org/apache/logging/log4j/";
    /** Every merged entry's time: 1980-01-01, the first a zip entry can hold. */
    private static final long FIXED_TIME = 315_532_800_000L;

    private AgentBundle() {
    }

    public static synchronized Path jar() throws IOException {
        Optional<Path> self = self();
        if (self.isPresent()) {
            return self.get();
        }
        if (built == null) {
            built = merge(System.getProperty("java.class.path"));
        }
        return built;
    }

    /** True when this process runs from runjob's jar (not from class directories). */
    public static boolean runsFromJar() {
        return self().isPresent();
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

    private static Path merge(String classPath) throws IOException {
        Path out = Files.createTempFile("runjob-agent-", ".jar");
        out.toFile().deleteOnExit();
        Set<String> seen = new HashSet<>();
        Map<String, StringBuilder> services = new TreeMap<>();
        try (JarOutputStream jar = new JarOutputStream(Files.newOutputStream(out))) {
            for (String entry : classPath.split(File.pathSeparator)) {
                Path p = Path.of(entry);
                if (Files.isDirectory(p)) {
                    Files.walkFileTree(p, new SimpleFileVisitor<>() {
                        @Override
                        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                            String name = p.relativize(file).toString().replace('\\', '/');
                            try (InputStream in = Files.newInputStream(file)) {
                                copy(jar, seen, name, in);
                            }
                            return FileVisitResult.CONTINUE;
                        }
                    });
                } else if (Files.isRegularFile(p) && entry.endsWith(".jar") && !p.getFileName().toString().contains("junit")) {
                    try (JarFile in = new JarFile(p.toFile())) {
                        for (JarEntry e : Collections.list(in.entries())) {
                            if (!e.isDirectory() && e.getName().startsWith(SERVICES)) {
                                try (InputStream s = in.getInputStream(e)) {
                                    services.computeIfAbsent(e.getName(), k -> new StringBuilder())
                                            .append(new String(s.readAllBytes(), StandardCharsets.UTF_8)).append('\n');
                                }
                            } else if (!e.isDirectory() && e.getName().startsWith(LOG4J_PLUGINS)) {
                                try (InputStream s = in.getInputStream(e)) {
                                    copy(jar, seen, e.getName(), s);
                                }
                            } else if (!e.isDirectory() && !e.getName().startsWith("META-INF/") && !e.getName().equals("module-info.class")
                                    && !e.getName().matches("lib/libJ(NvPTXCompiler|Nvrtc|CudaRuntime)-.*")) {
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
