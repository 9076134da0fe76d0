package org.runjob.distribute;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The agent artifact holds what an agent needs and nothing of the coordinator's: the build's
 * list and {@link AgentBundle}'s are one, the agent's packages import no library outside it, and the jar
 * an agent runs from in the tests has no SSH, YAML, schema, CLI or logging framework class.
 */
class AgentBundleTest {

    /** The packages in the agent artifact, and the libraries they may use besides the JDK. */
    private static final List<String> AGENT_PACKAGES = List.of("agent", "protocol");
    private static final List<String> AGENT_LIBRARIES = List.of("org.apache.commons.exec.", "jcuda.", "com.sun.jna.");

    @Test
    void theBuildsAgentExecutionIncludesWhatAgentBundleDoes() throws IOException {
        String pom = Files.readString(Path.of("pom.xml"));
        int from = pom.indexOf("<id>agent</id>");
        String execution = pom.substring(from, pom.indexOf("</execution>", from));
        String includes = execution.substring(execution.indexOf("<includes>"), execution.indexOf("</includes>"));
        List<String> built = new ArrayList<>();
        Matcher m = Pattern.compile("<include>([^<]+)</include>").matcher(includes);
        while (m.find()) {
            built.add(m.group(1).replaceAll("\\*\\*$", "").replaceAll("\\*$", ""));
        }
        assertThat(built).containsExactlyElementsOf(AgentBundle.AGENT_ENTRIES);
        assertThat(execution).contains("<mainClass>org.runjob.agent.AgentMain</mainClass>");
    }

    /** Which of runjob's packages they use is PackageOrderTest's (USES_ONLY); here, which libraries. */
    @Test
    void theAgentsPackagesImportOnlyTheirLibrariesAndTheJdk() throws IOException {
        Path root = Path.of("src/main/java/org/runjob");
        List<String> outside = new ArrayList<>();
        Pattern use = Pattern.compile("^import (static )?([a-z][\\w.]*\\.)[A-Za-z_$]+[\\w.*]*;", Pattern.MULTILINE);
        for (String pkg : AGENT_PACKAGES) {
            try (Stream<Path> files = Files.walk(root.resolve(pkg))) {
                for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                    Matcher m = use.matcher(Files.readString(f));
                    while (m.find()) {
                        String name = m.group(2);
                        boolean ok = name.startsWith("java.") || name.startsWith("javax.") || name.startsWith("sun.misc.")
                                || name.startsWith("org.runjob.") || AGENT_LIBRARIES.stream().anyMatch(name::startsWith);
                        if (!ok) {
                            outside.add(root.relativize(f) + " imports " + name);
                        }
                    }
                }
            }
        }
        assertThat(outside).isEmpty();
    }

    @Test
    void theAgentJarHoldsTheAgentAndNoneOfTheCoordinatorsLibraries() throws IOException {
        List<String> names = new ArrayList<>();
        Path made = AgentBundle.agentJar();
        assertThat(AgentBundle.isTemporary(made)).as("a jar made for this caller").isTrue();
        try (JarFile jar = new JarFile(made.toFile())) {
            for (JarEntry e : Collections.list(jar.entries())) {
                names.add(e.getName());
            }
        } finally {
            Files.delete(made);
        }
        assertThat(names).allMatch(AgentBundle::inAgent);
        assertThat(names).contains("org/runjob/agent/AgentMain.class", "org/runjob/protocol/Frame.class",
                "org/runjob/protocol/GpuInventory.class", "org/apache/commons/exec/CommandLine.class", "jcuda/driver/JCudaDriver.class",
                "com/sun/jna/Native.class");
        assertThat(names.stream().filter(n -> n.startsWith("lib/libJCudaDriver-") && n.endsWith(".so"))).hasSize(1);
        for (String coordinatorOnly : List.of("tools/jackson/", "com/fasterxml/", "org/runjob/json/", "com/jcraft/", "org/yaml/", "org/snakeyaml/",
                "com/networknt/", "picocli/", "org/apache/logging/",
                "org/slf4j/", "org/runjob/cli/", "org/runjob/launch/", "org/runjob/spec/", "org/runjob/transport/", "org/runjob/slurm/")) {
            assertThat(names).as("the agent jar's entries").noneMatch(n -> n.startsWith(coordinatorOnly));
        }
    }

    /** runjob's jar merged from class directories registers every backend of each (main's and the tests'), as the class path does. */
    @Test
    void aMergedRunjobJarKeepsTheServiceLinesOfEveryClassDirectory() throws IOException {
        Path made = AgentBundle.runjobJar();
        assertThat(AgentBundle.isTemporary(made)).as("merged from class directories").isTrue();
        try (JarFile jar = new JarFile(made.toFile())) {
            String lines = new String(jar.getInputStream(jar.getJarEntry("META-INF/services/org.runjob.node.Backend")).readAllBytes(),
                    StandardCharsets.UTF_8);
            assertThat(lines.lines().filter(l -> !l.isBlank()).sorted()).containsExactly("org.runjob.slurm.SlurmBackend",
                    "org.runjob.testbackend.ProcsBackend", "org.runjob.transport.SshBackend");
        } finally {
            Files.delete(made);
        }
    }
}
