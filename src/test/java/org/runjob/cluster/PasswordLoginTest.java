package org.runjob.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.OnSshTestbed;
import org.runjob.testbed.SshTestbed;
import org.runjob.testbed.Testbed;

/**
 * Password login ({@code ssh.password_env}) against h3's real sshd, which accepts only a password
 * from a throw-away user this test creates (and removes): the password reaches sshd, and nothing
 * runjob writes contains it.
 */
@OnSshTestbed
class PasswordLoginTest {

    static final String USER = SshTestbed.PASSWORD_USER;
    /** Quotes, a $(..) and a space: a password pasted into shell text would break or run something. */
    static final String PASSWORD = "pw 'q\" $(touch /tmp/rjtpw-pwned) " + Long.toHexString(System.nanoTime());

    @TempDir
    Path tmp;

    ClusterJobs jobs;
    Path home;

    @BeforeEach
    void createUser() throws Exception {
        jobs = new ClusterJobs(tmp);
        removeUser();
        home = Path.of("/tmp", USER + "-home");
        Files.createDirectories(home);
        Testbed.require(Testbed.runs("useradd", "-M", "-d", home.toString(), "-s", "/bin/sh", USER), "useradd (root) for a throw-away user");
        Process chpasswd = new ProcessBuilder("chpasswd").redirectErrorStream(true).start();
        chpasswd.getOutputStream().write((USER + ":" + PASSWORD + "\n").getBytes(StandardCharsets.UTF_8));
        chpasswd.getOutputStream().close();
        assertThat(chpasswd.waitFor()).isZero();
        Testbed.runs("chown", USER, home.toString());
    }

    @AfterEach
    void removeUser() throws Exception {
        Testbed.runs("userdel", "-f", USER);
        Path h = Path.of("/tmp", USER + "-home");
        if (Files.exists(h)) {
            try (Stream<Path> all = Files.walk(h)) {
                all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    Path job(String passwordEnv) throws IOException {
        SshTestbed.Host h3 = jobs.bed.host(3);
        return Files.writeString(tmp.resolve("pw.yaml"), "name: pw\nnodes:\n"
                + "  - {name: h3, host: " + h3.address() + ", port: " + h3.port() + ", user: " + USER + ", workers: 1, workdir: "
                + home.resolve("work") + "}\n"
                + "entrypoint: {command: [sh, -c, 'id -un; echo \"$RUNJOB_NODE\"']}\n"
                + "ssh: {known_hosts: " + jobs.bed.knownHosts() + ", password_env: " + passwordEnv + ", connect_timeout_s: 3}\n"
                + "logs: {dir: " + jobs.logs + "}\n");
    }

    /** runjob's environment: the password, and no key anywhere (an empty HOME, no ssh-agent). */
    Map<String, String> env() throws IOException {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.remove("SSH_AUTH_SOCK");
        env.put("HOME", Files.createDirectories(tmp.resolve("empty-home")).toString());
        env.put("RJT_PASSWORD", PASSWORD);
        return env;
    }

    @Test
    void aPasswordFromTheEnvironmentLogsInAndIsWrittenNowhere() throws Exception {
        Cli r = Cli.run(env(), "--verbose", job("RJT_PASSWORD").toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("[h3/0] " + USER + "\n[h3/0] h3\n");
        assertThat(r.out() + r.err()).doesNotContain(PASSWORD).doesNotContain("touch /tmp");
        List<Path> written;
        try (Stream<Path> all = Files.walk(jobs.logs)) {
            written = all.filter(Files::isRegularFile).toList();
        }
        assertThat(written).extracting(p -> p.getFileName().toString()).contains("runjob.log", "summary.json", "job.yaml");
        for (Path file : written) {
            assertThat(Files.readString(file, StandardCharsets.ISO_8859_1)).as(file.toString()).doesNotContain(PASSWORD);
        }
        assertThat(Path.of("/tmp/rjtpw-pwned")).doesNotExist();
    }

    @Test
    void aPasswordVariableThatIsNotSetIsNamedAndNothingStarts() throws Exception {
        Cli r = Cli.run(env(), job("RJT_NOT_SET").toString());
        assertThat(r.code()).isEqualTo(3);
        // said once, before any node is reached
        assertThat(r.err()).isEqualTo("runjob: ssh.password_env names RJT_NOT_SET, which is not set in runjob's environment\n");
        assertThat(home.resolve("work")).doesNotExist();
    }

    @Test
    void aWrongPasswordIsRefusedWithoutEchoingIt() throws Exception {
        Map<String, String> env = env();
        env.put("RJT_PASSWORD", PASSWORD + "x");
        Cli r = Cli.run(env, job("RJT_PASSWORD").toString());
        assertThat(r.code()).isEqualTo(3);
        SshTestbed.Host h3 = jobs.bed.host(3);
        assertThat(r.err()).contains("FAIL h3 ssh: node h3 (" + h3.address() + ":" + h3.port() + "): login refused (check user, "
                + "the password in $RJT_PASSWORD, ssh.identity, or ssh-agent)\n").doesNotContain(PASSWORD);
    }
}
