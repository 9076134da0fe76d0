package org.runjob.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.Leftovers;
import org.runjob.testbed.OnSshTestbed;
import org.runjob.testbed.Pids;
import org.runjob.testbed.Poll;
import org.runjob.testbed.SshTestbed;

/** The node side on real sshd hosts: what a dead agent leaves behind, commands that hang, host keys. */
@OnSshTestbed
class NodeSideTest {

    @TempDir
    Path tmp;

    ClusterJobs jobs;
    @RegisterExtension
    final Leftovers toClean = new Leftovers();

    @BeforeEach
    void setUp() throws Exception {
        jobs = new ClusterJobs(tmp);
    }


    @Test
    void sigkillOfARemoteAgentLeavesNothingOnItsNodeWithinGracePlusTwoSeconds() throws Exception {
        Path job = jobs.job("agentkill", jobs.node(jobs.bed.host(2), 2) + jobs.node(jobs.bed.host(3), 1), jobs.worker("daemon.py"),
                List.of("python3", "daemon.py"), "failure: {grace_period_s: 1}\n", Map.of("IGNORE_TERM", "1"));
        Process runjob = jobs.start(job);
        List<Long> pids = new ArrayList<>(jobs.awaitPids(3, Duration.ofSeconds(60)));
        pids.addAll(Pids.await(jobs.pids, "daemon", 1, Duration.ofSeconds(10)));
        toClean.addAll(pids);
        long agent = Pids.parentOf(pids.get(0));
        assertThat(Pids.parentOf(pids.get(3))).as("the daemon is adopted by h2's agent").isEqualTo(agent);
        Path registry = Pids.registryOf(agent);
        Poll.until(() -> Pids.recorded(registry).contains(pids.get(3)), Duration.ofSeconds(5), "the daemon to be recorded");

        ProcessHandle.of(agent).orElseThrow().destroyForcibly();
        Poll.until(() -> Pids.living(List.of(pids.get(0), pids.get(1), pids.get(3))).isEmpty(), Duration.ofSeconds(1 + 2),
                "h2's workers and daemon to be gone");
        assertThat(runjob.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(runjob.exitValue()).isEqualTo(1);
        assertThat(jobs.stderrOf(job)).contains("root cause: rank 0 (local rank 0) on node h2: lost: node h2 lost");
        Pids.awaitGone(pids, Duration.ofSeconds(5), "h3's worker, stopped by fail-fast");
    }

    @Test
    void aRevokedHostKeyIsRefusedUnderEveryPolicyAndAWildcardEntryIsAccepted() throws Exception {
        SshTestbed.Host h2 = jobs.bed.host(2);
        Path job = jobs.job("revoked", jobs.node(h2, 1), jobs.worker("flaky.py"), List.of("python3", "flaky.py"), "", Map.of());
        String revokedLine = "@revoked * " + jobs.bed.publicKey(h2) + "\n";
        for (String policy : List.of("strict", "accept-new")) {
            // revoked and also listed as known: revoked wins, and nothing is appended
            Path known = Files.writeString(tmp.resolve("known_hosts-" + policy), revokedLine + h2.knownHostsName() + " "
                    + jobs.bed.publicKey(h2) + "\n");
            String before = Files.readString(known);
            Cli r = jobs.run(job, "--set", "ssh.known_hosts=" + known, "--set", "ssh.host_key_policy=" + policy);
            assertThat(r.code()).as(policy).isEqualTo(3);
            assertThat(r.err()).as(policy).contains("FAIL h2 ssh: node h2 (10.203.0.12:22): the host key ssh-ed25519 "
                    + jobs.bed.fingerprint(h2) + " is REVOKED in " + known + " (@revoked); refusing to connect under every policy");
            assertThat(Files.readString(known)).as(policy).isEqualTo(before);
        }
        Path wildcard = Files.writeString(tmp.resolve("known_hosts-wildcard"), "!10.203.0.13," + SshTestbed.SUBNET + ".* "
                + jobs.bed.publicKey(h2) + "\n");
        Cli ok = jobs.run(job, "--set", "ssh.known_hosts=" + wildcard);
        assertThat(ok.code()).as(ok.err()).isZero();
        assertThat(ok.out()).contains("[h2/0] rank 0 attempt 0 restarts 0\n");
    }

    @Test
    void aNodeWithoutJavaGetsARuntimeOnceAndRuns() throws Exception {
        SshTestbed.Host h4 = jobs.bed.host(4);
        jobs.bed.forgetRuntimes();
        Path job = jobs.job("nojava", jobs.node(h4, 1), jobs.worker("flaky.py"), List.of("python3", "flaky.py"), "", Map.of());
        Cli first = jobs.run(job);
        assertThat(first.code()).as(first.err()).isZero();
        assertThat(first.out()).contains("[h4/0] rank 0 attempt 0 restarts 0\n");
        assertThat(Files.readString(runFolder("nojava", jobs.logs).resolve("runjob.log"))).contains("node h4: no java >= 17 there; sending a runtime (");
        try (var runtimes = Files.list(jobs.bed.cache().resolve("runjob/runtimes"))) {
            List<Path> kept = runtimes.filter(p -> !p.getFileName().toString().startsWith(".")).toList();
            assertThat(kept).hasSize(1);
            assertThat(kept.get(0).getFileName().toString()).matches("[0-9a-f]{64}");
            assertThat(kept.get(0).resolve("rt/bin/java")).isExecutable();
        }
        Path logs2 = tmp.resolve("runs2");
        Cli second = jobs.run(job, "--set", "logs.dir=" + logs2);
        assertThat(second.code()).as(second.err()).isZero();
        assertThat(Files.readString(runFolder("nojava", logs2).resolve("runjob.log"))).doesNotContain("sending a runtime");
    }

    static Path runFolder(String job, Path logs) throws Exception {
        try (var runs = Files.list(logs.resolve(job))) {
            return runs.findFirst().orElseThrow();
        }
    }

    @Test
    void aDetachedRunOnTheClusterIsSeenAndStoppedFromAnotherCommand() throws Exception {
        Path job = jobs.job("detached", jobs.node(jobs.bed.host(2), 1) + jobs.node(jobs.bed.host(3), 1), jobs.worker("sleeper.py"),
                List.of("python3", "sleeper.py"), "failure: {grace_period_s: 1}\n", Map.of());
        Cli detach = jobs.run(job, "--detach");
        assertThat(detach.code()).as(detach.err()).isZero();
        String id = detach.out().strip();
        List<Long> pids = jobs.awaitPids(2, Duration.ofSeconds(30));
        toClean.addAll(pids);
        String logs = jobs.logs.toString();
        // status.json follows the workers' STARTED reports: poll until both are in
        Poll.until(() -> Cli.run(System.getenv(), "status", id, "--logs-dir", logs).out()
                .matches("(?s)run " + id + " of job detached: running, attempt 0.*h2 +0  running .*h3 +1  running .*"),
                Duration.ofSeconds(10), "status to show both ranks running");
        // every rank's stacks over SSH, through the run folder; the sleepers wait in common.sleep_forever and go on
        Cli stacks = Cli.run(System.getenv(), "stacks", id, "--logs-dir", logs);
        assertThat(stacks.code()).as(stacks.err()).isZero();
        assertThat(stacks.out()).startsWith("[h2/0]\nprocess ").contains("\n[h3/1]\nprocess ")
                .containsPattern("/common.py\", line \\d+ in sleep_forever\n")
                .containsPattern("\n  rank 0: sleep_forever \\(common.py:\\d+\\)\n")
                .containsPattern("\n  rank 1: sleep_forever \\(common.py:\\d+\\)\n");
        assertThat(Pids.living(pids)).hasSize(2);
        Cli stop = Cli.run(System.getenv(), "stop", id, "--logs-dir", logs);
        assertThat(stop.code()).as(stop.err()).isZero();
        assertThat(stop.err()).isEqualTo("runjob: run " + id + " interrupted (exit 130)\n");
        assertThat(Pids.living(pids)).isEmpty();
    }
}
