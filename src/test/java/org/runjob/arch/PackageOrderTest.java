package org.runjob.arch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.runjob.agent.AgentMain;
import org.runjob.cli.Main;
import org.runjob.protocol.NodeJvm;

/**
 * Pins the package layers: a package may use only packages in layers below its own (imports and
 * fully qualified names alike), never a sibling in its own layer. The backends ({@link #BACKENDS}:
 * the packages of the backends registered in {@code META-INF/services}, and those the registry
 * imports, that are in no other layer, so a new backend needs no line here) are siblings that
 * only the registry may use (it finds most by their service line), and only a run, the runs
 * beyond one process ({@code runs}) and the CLI use the registry: launch, preflight and report know
 * the seam ({@code node}), never a backend.
 */
class PackageOrderTest {

    /** The packages below the backends, which the registry may import too. */
    private static final List<Set<String>> BELOW = List.of(
            Set.of("json", "runtime", "observe"),
            Set.of("protocol", "spec"),
            Set.of("agent"),
            Set.of("logs", "plan", "distribute", "node"));
    private static final List<Set<String>> ABOVE = List.of(
            Set.of("backends"),
            Set.of("session"),
            Set.of("launch", "preflight"),
            Set.of("report"),
            Set.of("run"),
            Set.of("runs"),
            Set.of("serve"),
            Set.of("cli"));

    /** The backend packages: each is used by the registry alone. */
    static final Set<String> BACKENDS = backends();
    static final List<Set<String>> LAYERS = Stream.of(BELOW.stream(), Stream.of(BACKENDS), ABOVE.stream()).flatMap(s -> s).toList();
    /** Who may use a package besides itself, where that is narrower than the layers. */
    static final Map<String, Set<String>> ONLY_USED_BY = Stream.concat(
            BACKENDS.stream().map(b -> Map.entry(b, Set.of("backends"))),
            Stream.of(Map.entry("backends", Set.of("run", "runs", "cli"))))
            .collect(Collectors.toUnmodifiableMap(Map.Entry::getKey, Map.Entry::getValue));
    /**
     * What a package may use at most, where that is narrower than the layers: the agent jar's
     * packages (distribute.AgentBundle.AGENT_ENTRIES) use only each other, so the agent never
     * needs a class that jar lacks.
     */
    static final Map<String, Set<String>> USES_ONLY = Map.of("agent", Set.of("protocol", "runtime", "observe"), "protocol", Set.of("runtime"),
            "runtime", Set.of(), "observe", Set.of());

    private static Set<String> backends() {
        try {
            Set<String> found = new TreeSet<>();
            Matcher m = Pattern.compile("(?m)^(?:import )?org\\.runjob\\.([a-z]+)\\.").matcher(
                    Files.readString(Path.of("src/main/resources/META-INF/services/org.runjob.node.Backend"))
                    + Files.readString(Path.of("src/main/java/org/runjob/backends/Backends.java")));
            while (m.find()) {
                found.add(m.group(1));
            }
            BELOW.forEach(found::removeAll);
            return Set.copyOf(found);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int layer(String pkg) {
        for (int i = 0; i < LAYERS.size(); i++) {
            if (LAYERS.get(i).contains(pkg)) {
                return i;
            }
        }
        return -1;
    }

    private static final Pattern USE = Pattern.compile("org\\.runjob\\.([a-z]+)\\.");
    /** Comments: a class named in prose is not a use. */
    private static final String COMMENT = "(?s)/\\*.*?\\*/|//[^\n]*";
    /** A string literal: class names in strings (a main class to exec) are not uses. */
    private static final String STRING = "\"(?:[^\"\\\\\n]|\\\\.)*\"";

    @Test
    void packagesUseOnlyLowerLayersAndBackendsOnlyTheRegistry() throws IOException {
        Path root = Path.of("src/main/java/org/runjob");
        List<String> wrong = new ArrayList<>();
        TreeSet<String> seen = new TreeSet<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String pkg = root.relativize(f).getName(0).toString();
                seen.add(pkg);
                assertThat(layer(pkg)).as("the layers list " + pkg).isNotNegative();
                Matcher m = USE.matcher(Files.readString(f).replaceAll("(?m)^package .*$", "").replaceAll(STRING, "\"\"").replaceAll(COMMENT, ""));
                while (m.find()) {
                    String used = m.group(1);
                    if (used.equals(pkg)) {
                        continue;
                    }
                    if (layer(used) >= layer(pkg)) {
                        wrong.add(root.relativize(f) + " uses " + used + (layer(used) == layer(pkg) ? ", a sibling" : ", a higher layer"));
                    } else if (ONLY_USED_BY.containsKey(used) && !ONLY_USED_BY.get(used).contains(pkg)) {
                        wrong.add(root.relativize(f) + " uses " + used + ", which only " + ONLY_USED_BY.get(used) + " may use");
                    } else if (USES_ONLY.containsKey(pkg) && !USES_ONLY.get(pkg).contains(used)) {
                        wrong.add(root.relativize(f) + " uses " + used + "; " + pkg + " may use only " + USES_ONLY.get(pkg));
                    }
                }
            }
        }
        assertThat(seen).containsExactlyInAnyOrderElementsOf(LAYERS.stream().flatMap(Set::stream).toList());
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

    /**
     * {@code cli} holds picocli's parts only (commands, option mixins, converters, the entry point):
     * each of its classes uses picocli; what a command orchestrates lives in {@code run} or {@code runs}.
     */
    @Test
    void everyClassOfTheCliUsesPicocli() throws IOException {
        List<String> plain = new ArrayList<>();
        try (Stream<Path> files = Files.list(Path.of("src/main/java/org/runjob/cli"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                if (!Pattern.compile("(?m)^import picocli\\.").matcher(Files.readString(f)).find()) {
                    plain.add(f.getFileName().toString());
                }
            }
        }
        assertThat(plain).isEmpty();
    }

    /**
     * The coordinator's packages reach into {@code agent} for these only: the entry point hands the
     * node side's commands to {@code AgentMain}, and the process helpers both sides run (a process's
     * /proc facts, a worker's process tree, how a program on this machine is ended). Everything the
     * two sides agree on (frames, payloads, the node JVM's command line) is in {@code protocol}.
     */
    @Test
    void theCoordinatorUsesOfTheAgentAreTheEntryPointAndTheProcessHelpers() throws IOException {
        Path root = Path.of("src/main/java/org/runjob");
        Set<String> uses = new TreeSet<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java") && !p.startsWith(root.resolve("agent"))).toList()) {
                Matcher m = Pattern.compile("(?m)^import org\\.runjob\\.agent\\.(\\w+);").matcher(Files.readString(f));
                while (m.find()) {
                    uses.add(root.relativize(f).getName(0) + " -> " + m.group(1));
                }
            }
        }
        assertThat(uses).containsExactly("cli -> AgentMain", "logs -> ProcInfo", "node -> Watchdog", "session -> ProcessTree",
                "session -> Watchdog");
    }

    /** The node JVM's main classes, named as text in {@code protocol.NodeJvm}, are the real ones. */
    @Test
    void theMainClassesTheNodeJvmNamesExist() {
        assertThat(NodeJvm.AGENT_MAIN).isEqualTo(AgentMain.class.getName());
        assertThat(NodeJvm.RUNJOB_MAIN).isEqualTo(Main.class.getName());
    }

    /** The rules above can fail: a sibling's use and a backend used outside the registry are both caught. */
    @Test
    void theLayersTellSiblingsAndBackendsApart() {
        assertThat(layer("plan")).isEqualTo(layer("node"));
        assertThat(layer("preflight")).isEqualTo(layer("launch")).isGreaterThan(layer("session"));
        assertThat(layer("protocol")).isLessThan(layer("agent"));
        assertThat(layer("transport")).isEqualTo(layer("slurm")).isLessThan(layer("launch"));
        assertThat(ONLY_USED_BY.get("slurm")).doesNotContain("launch", "preflight", "report", "cli");
        assertThat(layer("spec")).isLessThan(layer("agent")); // allowed by the layers, refused by USES_ONLY
        assertThat(USES_ONLY.get("agent")).doesNotContain("spec");
        assertThat(BACKENDS).contains("transport", "slurm", "hosted");
        assertThat(BACKENDS).allMatch(b -> ONLY_USED_BY.get(b).equals(Set.of("backends")));
    }
}
