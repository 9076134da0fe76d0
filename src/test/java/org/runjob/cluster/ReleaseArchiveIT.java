package org.runjob.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.distribute.Sha256;
import org.runjob.testbed.OnSshTestbed;
import org.runjob.testbed.SshTestbed;
import org.runjob.testbed.Testbed;

/**
 * The release archive ({@code mvn -Prelease package}), unpacked where a user would, run in a
 * private mount namespace where every JDK ({@code /usr/lib/jvm}) and Maven ({@code /usr/share/maven})
 * are hidden: its version line, a dry run, a local job (local agents on the bundled runtime), a job
 * over the SSH testbed whose node without java gets that same runtime, its bash completion under
 * both names a user types, and the wheel installed into a fresh virtualenv.
 */
@OnSshTestbed
class ReleaseArchiveIT {

    /** Both JDKs and Maven live under these on Debian; /usr/bin/java and /usr/bin/mvn point into them. */
    private static final List<String> HIDDEN = List.of("/usr/lib/jvm", "/usr/share/maven");

    @TempDir
    Path tmp;

    Path home;
    Path runjob;

    /** What a command printed and how it ended. */
    record Ran(int code, String out, String err) {
    }

    @BeforeEach
    void unpack() throws Exception {
        Testbed.require("root".equals(System.getProperty("user.name")), "root (a private mount namespace hides the JDK)");
        Path archive = archive();
        assertThat(Files.size(archive)).as("the archive's size").isLessThanOrEqualTo(80L << 20);
        Ran untar = run(List.of("tar", "-xzf", archive.toString(), "-C", tmp.toString()), Map.of(), tmp);
        assertThat(untar.code()).as(untar.err()).isZero();
        home = tmp.resolve("runjob-" + System.getProperty("runjob.release.version"));
        runjob = home.resolve("bin/runjob");
    }

    /** The archive the release profile made: target/runjob-VERSION-linux-ARCH.tar.gz. */
    static Path archive() throws IOException {
        String dir = System.getProperty("runjob.release.dir");
        assertThat(dir).as("runjob.release.dir (set by the release profile: mvn -Prelease verify)").isNotNull();
        try (Stream<Path> files = Files.list(Path.of(dir))) {
            List<Path> archives = files.filter(p -> p.getFileName().toString()
                    .matches("runjob-" + System.getProperty("runjob.release.version").replace(".", "\\.") + "-linux-[a-z0-9_]+\\.tar\\.gz")).toList();
            assertThat(archives).as("release archives in " + dir).hasSize(1);
            return archives.get(0);
        }
    }

    @Test
    void itHoldsWhatItSaysAndRunsWithNoJdkAndNoMaven() throws Exception {
        for (String file : List.of("bin/runjob", "install.sh", "runtime/bin/java")) {
            assertThat(home.resolve(file)).isExecutable();
        }
        for (String file : List.of("lib/runjob.jar", "runtime/RUNJOB-RUNTIME", "schemas/job.schema.json", "jobs/two-node.yaml",
                "examples/checkin/checkin.py", "share/completion/runjob.bash", "share/completion/runjob.zsh", "share/doc/docs/running.md",
                "README.md", "LICENSE", "NOTICE", "runtime/legal/java.base/LICENSE")) {
            assertThat(home.resolve(file)).isRegularFile();
        }
        assertThat(Files.readString(home.resolve("THIRD-PARTY.txt"))).contains("JSch (com.github.mwiede:jsch:")
                .contains("SnakeYAML (org.yaml:snakeyaml:").contains("picocli (info.picocli:picocli:").doesNotContain("junit");
        assertThat(Files.readString(home.resolve("share/doc/runjob-help.txt"))).contains("Usage: runjob run ").contains("Usage: runjob submit ");

        Ran hidden = hidden(List.of("bash", "-c", "command -v java mvn javac; find /usr/lib/jvm /usr/share/maven -mindepth 1 | wc -l"), tmp);
        assertThat(hidden.out()).as("what the namespace still shows of a JDK or Maven").isEqualTo("0\n");

        Ran version = hidden(List.of(runjob.toString(), "--version"), tmp);
        assertThat(version.code()).as(version.err()).isZero();
        assertThat(version.out()).matches("runjob " + System.getProperty("runjob.release.version").replace(".", "\\.")
                + " \\(commit [0-9a-f]{7,}(, with changes)?; built \\d{4}-\\d\\d-\\d\\dT[0-9:]+Z\\)\nJava " + Runtime.version().feature() + "\\.[0-9.]+\n");
        // the first run made the class-data archive beside the jar (lib/ is writable here), with its checksum
        List<Path> archives;
        try (Stream<Path> lib = Files.list(home.resolve("lib"))) {
            archives = lib.filter(p -> p.getFileName().toString().endsWith(".jsa")).toList();
        }
        assertThat(archives).hasSize(1);
        assertThat(archives.get(0).resolveSibling(archives.get(0).getFileName() + ".sum")).isRegularFile();
        // cut short it would crash the JVM (exit 134): the launcher makes it again instead, and --verbose says so
        Files.write(archives.get(0), Arrays.copyOf(Files.readAllBytes(archives.get(0)), 100_000));
        Ran cut = hidden(List.of(runjob.toString(), "--version", "--verbose"), tmp);
        assertThat(cut.code()).as(cut.err()).isZero();
        assertThat(cut.err()).contains("runjob: the class-data archive " + archives.get(0) + " is not the one made here");
        assertThat(Files.size(archives.get(0))).isGreaterThan(100_000);

        Ran dry = hidden(List.of(runjob.toString(), "--dry-run", "jobs/two-node.yaml"), home);
        assertThat(dry.code()).as(dry.err()).isZero();
        assertThat(dry.out()).contains("2 nodes  world size 4").contains("node v100  node rank 0  ssh root@202.201.252.102:30430");

        Ran local = runsALocalJob(runjob, "two");
        assertThat(local.err()).contains("job two run ").contains(" succeeded in ");
    }

    /** {@code runjob} runs job {@code name}: 2 workers on one local node check in (the archive's example); what it printed. */
    Ran runsALocalJob(Path runjob, String name) throws Exception {
        Path job = Files.writeString(tmp.resolve(name + ".yaml"), String.join("\n",
                "name: " + name,
                "nodes:",
                "  - {name: n1, local: true, workers: 2}",
                "entrypoint: {command: [python3, checkin.py]}",
                "files: [" + home.resolve("examples/checkin/checkin.py") + "]",
                "logs: {dir: " + tmp.resolve("runs") + "}",
                ""));
        Ran local = hidden(List.of(runjob.toString(), job.toString()), tmp);
        assertThat(local.code()).as(local.err()).isZero();
        assertThat(local.out()).contains("[n1/0] all 2 ranks checked in\n");
        return local;
    }

    @Test
    void anSshJobRunsAndTheNodeWithoutJavaGetsTheBundledRuntime() throws Exception {
        ClusterJobs jobs = new ClusterJobs(tmp);
        SshTestbed.Host h1 = jobs.bed.host(1);
        SshTestbed.Host h4 = jobs.bed.host(4);
        Path job = jobs.job("released", jobs.node(h1, 1) + jobs.node(h4, 1), List.of(home.resolve("examples/checkin/checkin.py")),
                List.of("python3", "checkin.py"), "", Map.of());
        Ran ran = hidden(List.of(runjob.toString(), job.toString()), tmp);
        assertThat(ran.code()).as(ran.err()).isZero();
        assertThat(ran.out()).contains("[h1/0] all 2 ranks checked in\n").contains("[h4/1] rank 1 (local 0) on h4 checked in\n");

        // this user's cache (fresh here) holds the bundled runtime packed as it is, and h4 runs that one
        Path runtimes = tmp.resolve("cache/runjob/runtimes");
        List<Path> packed;
        try (Stream<Path> files = Files.list(runtimes)) {
            packed = files.filter(p -> p.getFileName().toString().endsWith(".tgz")).toList();
        }
        assertThat(packed).hasSize(1);
        assertThat(packed.get(0).getFileName().toString()).matches("jre-" + Runtime.version().feature() + "[0-9.+a-zA-Z-]*-bundled-\\d+-\\d+-x86_64-glibc\\.tgz");
        Path onH4 = jobs.bed.cache().resolve("runjob/runtimes").resolve(Sha256.of(packed.get(0)));
        assertThat(onH4.resolve("rt/bin/java")).isExecutable();
        assertThat(onH4.resolve("rt/RUNJOB-RUNTIME")).hasSameTextualContentAs(home.resolve("runtime/RUNJOB-RUNTIME"));
    }

    @Test
    void theWheelInstallsARunjobThatRunsWithNoJdk() throws Exception {
        Path wheel;
        try (Stream<Path> files = Files.list(Path.of(System.getProperty("runjob.release.dir")))) {
            List<Path> wheels = files.filter(p -> p.getFileName().toString().matches("runjob-[0-9.]+(dev0)?-py3-none-manylinux_2_17_[a-z0-9_]+\\.whl"))
                    .toList();
            assertThat(wheels).hasSize(1);
            wheel = wheels.get(0);
        }
        Testbed.require(Testbed.runs("/usr/bin/python3", "-c", "import ensurepip"), "python3's venv with pip (Debian: python3-venv)");
        Path venv = tmp.resolve("venv");
        Ran made = run(List.of("/usr/bin/python3", "-m", "venv", venv.toString()), Map.of(), tmp);
        assertThat(made.code()).as(made.err()).isZero();
        Ran installed = run(List.of(venv.resolve("bin/pip").toString(), "install", "--no-index", "--no-deps", "--no-cache-dir", wheel.toString()),
                Map.of(), tmp);
        assertThat(installed.code()).as(installed.err()).isZero();

        Ran version = hidden(List.of(venv.resolve("bin/runjob").toString(), "--version"), tmp);
        assertThat(version.code()).as(version.err()).isZero();
        assertThat(version.out()).startsWith("runjob " + System.getProperty("runjob.release.version") + " (commit ");
        runsALocalJob(venv.resolve("bin/runjob"), "one");
    }

    @Test
    void bashCompletesUnderBothNames() throws Exception {
        Path script = home.resolve("share/completion/runjob.bash");
        Path driver = Path.of("src/test/resources/release/complete.py").toAbsolutePath();
        Ran onPath = run(List.of("/usr/bin/python3", driver.toString(), script.toString(), "runjob st"),
                Map.of("PATH", home.resolve("bin") + ":/usr/bin:/bin"), tmp);
        assertThat(onPath.code()).as(onPath.err()).isZero();
        assertThat(onPath.out().lines().map(String::strip)).contains("stacks  status  stop", "COMPLETED: runjob st");
        Ran relative = run(List.of("/usr/bin/python3", driver.toString(), script.toString(), "bin/runjob stop --n"), Map.of(), home);
        assertThat(relative.code()).as(relative.err()).isZero();
        assertThat(relative.out().lines().map(String::strip)).contains("COMPLETED: bin/runjob stop --now");
    }

    /** {@code argv} in {@code dir}, in a private mount namespace without any JDK or Maven, with a cache and state of this test's. */
    Ran hidden(List<String> argv, Path dir) throws Exception {
        StringBuilder hide = new StringBuilder();
        for (String d : HIDDEN) {
            hide.append("mount -t tmpfs tmpfs ").append(d).append(" && ");
        }
        List<String> cmd = new ArrayList<>(List.of("unshare", "--mount", "--propagation", "private", "--", "bash", "-c",
                hide + "exec env -u JAVA_HOME \"$@\"", "hide"));
        cmd.addAll(argv);
        return run(cmd, Map.of("XDG_CACHE_HOME", tmp.resolve("cache").toString(), "XDG_STATE_HOME", tmp.resolve("state").toString()), dir);
    }

    static Ran run(List<String> argv, Map<String, String> env, Path dir) throws Exception {
        Path out = Files.createTempFile("release-", ".out");
        Path err = Files.createTempFile("release-", ".err");
        try {
            ProcessBuilder pb = new ProcessBuilder(argv).directory(dir.toFile()).redirectOutput(out.toFile()).redirectError(err.toFile());
            pb.environment().putAll(env);
            Process p = pb.start();
            if (!p.waitFor(180, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(argv + " did not end within 180 s; stderr: " + Files.readString(err));
            }
            return new Ran(p.exitValue(), Files.readString(out), Files.readString(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }
}
