package org.runjob.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.spec.JobSpec;
import org.runjob.testbed.Pids;
import org.runjob.testbed.SshTestbed;
import org.runjob.transport.RemoteExec;
import org.runjob.transport.SshConnector;
import org.runjob.transport.SshException;
import org.runjob.transport.SshTarget;

import com.jcraft.jsch.Session;
import org.runjob.testbed.Poll;

/** The node side on real sshd hosts: what a dead agent leaves behind, commands that hang. */
class NodeSideTest {

    @TempDir
    Path tmp;

    ClusterJobs jobs;
    final List<Long> toClean = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        jobs = new ClusterJobs(tmp);
    }

    @AfterEach
    void cleanUp() {
        Pids.killAll(toClean);
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
    void aRemoteCommandThatHangsEndsAtItsDeadline() throws Exception {
        SshTestbed.Host h2 = jobs.bed.host(2);
        JobSpec.SshSpec ssh = new JobSpec.SshSpec(Optional.of(jobs.bed.userKey().toString()), jobs.bed.knownHosts().toString(),
                JobSpec.HostKeyPolicy.STRICT, 3, Optional.empty());
        Session session = new SshConnector(ssh, System.getenv()).connect(new SshTarget("h2", h2.address(), OptionalInt.of(h2.port()),
                Optional.of("root")));
        try {
            Path started = tmp.resolve("hang.started");
            SshException e = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> catchThrowableOfType(SshException.class,
                    () -> RemoteExec.run(session, List.of("sh", "-c", "touch \"$1\"; exec sleep 60", "sh", started.toString()), 1500)));
            assertThat(started).exists();
            assertThat(e).hasMessage("sh gave no answer within 2 s (a hung file system on the node?); its channel was closed");
            // the session stays usable for the next command
            assertThat(RemoteExec.run(session, List.of("echo", "still here"), 5000).stdout()).isEqualTo("still here\n");
        } finally {
            session.disconnect();
        }
    }
}
