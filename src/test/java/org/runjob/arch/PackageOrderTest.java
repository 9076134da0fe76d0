package org.runjob.arch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * Pins the one-way package order: a package may use only packages before it in {@link #ORDER}
 * (imports and fully qualified names alike). The node seam sits below every backend: launch and
 * preflight know {@code node}, never {@code transport} (SSH) or {@code slurm}; only the CLI picks a backend.
 */
class PackageOrderTest {

    static final List<String> ORDER = List.of("agent", "spec", "logs", "plan", "distribute", "node", "transport", "slurm", "launch",
            "preflight", "report", "cli");

    private static final Pattern USE = Pattern.compile("org\\.runjob\\.([a-z]+)\\.");
    /** Comments: a class named in prose is not a use. */
    private static final String COMMENT = "(?s)/\\*.*?\\*/|//[^\n]*";
    /** A string literal: class names in strings (a main class to exec) are not uses. */
    private static final String STRING = "\"(?:[^\"\\\\\n]|\\\\.)*\"";

    @Test
    void packagesDependOnlyOnEarlierOnes() throws IOException {
        Path root = Path.of("src/main/java/org/runjob");
        List<String> wrong = new ArrayList<>();
        TreeSet<String> seen = new TreeSet<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String pkg = root.relativize(f).getName(0).toString();
                seen.add(pkg);
                assertThat(ORDER).as("package order lists " + pkg).contains(pkg);
                Matcher m = USE.matcher(Files.readString(f).replaceAll("(?m)^package .*$", "").replaceAll(STRING, "\"\"").replaceAll(COMMENT, ""));
                while (m.find()) {
                    String used = m.group(1);
                    if (!used.equals(pkg) && ORDER.indexOf(used) > ORDER.indexOf(pkg)) {
                        wrong.add(root.relativize(f) + " uses " + used);
                    }
                }
            }
        }
        assertThat(seen).containsExactlyInAnyOrderElementsOf(ORDER);
        assertThat(wrong).isEmpty();
    }

    @Test
    void onlyTheSshBackendKnowsJsch() throws IOException {
        Path root = Path.of("src/main/java/org/runjob");
        List<String> users = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                if (Files.readString(f).contains("com.jcraft.jsch")) {
                    users.add(root.relativize(f).getName(0).toString());
                }
            }
        }
        assertThat(new TreeSet<>(users)).containsExactly("transport");
    }
}
