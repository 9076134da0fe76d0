package org.runjob.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.Leftovers;
import org.runjob.testbed.OnSshTestbed;
import org.runjob.testbed.Pids;
import org.runjob.testbed.Podman;
import org.runjob.testbed.Poll;
import org.runjob.testbed.Testbed;

/**
 * Workers in real podman containers on the sshd hosts (an image made with {@code podman import},
 * the host's /usr mounted read-only): ranks run inside, DDP trains across three hosts, and a
 * fail-fast, Ctrl-C, {@code stop} or kill -9 of a node's agent leaves no container of the run,
 * running or exited.
 */
@OnSshTestbed
class ContainerTest {

    @TempDir
    Path tmp;

    ClusterJobs jobs;
    @RegisterExtension
    final Leftovers toClean = new Leftovers();
    String image;

    @BeforeEach
    void setUp() throws Exception {
        jobs = new ClusterJobs(tmp);
        String missing = Podman.missing();
        Testbed.require(missing == null, missing == null ? "" : missing);
        Testbed.require(Testbed.runs("/usr/bin/python3", "-c", "import torch.distributed"), "PyTorch for /usr/bin/python3 (Debian: python3-torch)");
        image = Podman.image();
    }

    private String container() {
        return "environment: {container: {image: '" + image + "', mounts: ['/usr:/usr:ro', '" + jobs.pids + ":" + jobs.pids + "']}}\n";
    }

    private Path job(String name, List<Path> files, List<String> command, String extra, Map<String, String> env) throws Exception {
        return jobs.job(name, jobs.node(jobs.bed.host(1), 1) + jobs.node(jobs.bed.host(2), 1) + jobs.node(jobs.bed.host(3), 1), files,
                command, container() + extra, env);
    }

    /** The id of job {@code name}'s only run. */
    private String runId(String name) throws Exception {
        return NodeSideTest.runFolder(name, jobs.logs).getFileName().toString();
    }

    private void noContainerLeft(String run) throws Exception {
        Poll.until(() -> {
            try {
                return Podman.containers("runjob.run=" + run).isEmpty();
            } catch (Exception e) {
                return false;
            }
        }, Duration.ofSeconds(20), "every container of run " + run + " to be removed");
        assertThat(Podman.containers("runjob.run=" + run)).isEmpty();
    }

    @Test
    void ranksRunInsideTheirContainersAndDdpTrainsAcrossThreeHosts() throws Exception {
        Path who = jobs.job("inside", jobs.node(jobs.bed.host(1), 2) + jobs.node(jobs.bed.host(3), 1), jobs.worker("whoami.py"),
                List.of("python3", "whoami.py"), container(), Map.of());
        Cli r = jobs.run(who);
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out().lines().filter(l -> l.contains("] rank ")).sorted().toList()).containsExactly(
                "[h1/0] rank 0 python /usr/bin/python3 script - modules - container True",
                "[h1/1] rank 1 python /usr/bin/python3 script - modules - container True",
                "[h3/2] rank 2 python /usr/bin/python3 script - modules - container True");
        assertThat(r.err()).contains("ok python3 -> /usr/bin/python3 (in " + image + ") (Python ").contains("ok image " + image + " ");
        noContainerLeft(runId("inside"));

        Path ddp = job("cddp", List.of(ClusterJobs.DDP), List.of("python3", "train.py"), "rendezvous: {port: auto}\n", Map.of());
        Cli trained = jobs.run(ddp);
        assertThat(trained.code()).as(trained.err()).isZero();
        assertThat(ClusterJobs.trained(trained.out())).hasSize(3);
        assertThat(ClusterJobs.weights(trained.out())).hasSize(3).as("DDP keeps every replica identical")
                .containsOnly(ClusterJobs.weights(trained.out()).get(0));
        noContainerLeft(runId("cddp"));
    }

    @Test
    void failFastAndCtrlCLeaveNoContainer() throws Exception {
        Path failing = job("cfail", jobs.worker("fail_one.py"), List.of("python3", "fail_one.py"), "failure: {grace_period_s: 1}\n",
                Map.of("FAIL_RANK", "1", "FAIL_CODE", "3", "IGNORE_TERM", "1", "FAIL_AFTER_S", "0.3"));
        Cli r = jobs.run(failing);
        assertThat(r.code()).as(r.err()).isEqualTo(1);
        assertThat(r.err()).contains("root cause: rank 1 (local rank 0) on node h2: exit 3");
        noContainerLeft(runId("cfail"));
        for (String f : List.of("rank-0.pid", "rank-1.pid", "rank-2.pid")) {
            Files.deleteIfExists(jobs.pids.resolve(f));
        }

        Path sleeping = job("cint", jobs.worker("sleeper.py"), List.of("python3", "sleeper.py"), "failure: {grace_period_s: 1}\n", Map.of());
        Process runjob = jobs.start(sleeping);
        List<Long> pids = jobs.awaitPids(3, Duration.ofSeconds(90));
        toClean.addAll(pids);
        new ProcessBuilder("kill", "-INT", Long.toString(runjob.pid())).start().waitFor();
        assertThat(runjob.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(runjob.exitValue()).as(jobs.stderrOf(sleeping)).isEqualTo(130);
        Pids.awaitGone(pids, Duration.ofSeconds(5), "every rank after Ctrl-C");
        noContainerLeft(runId("cint"));
    }

    /**
     * The culprit's container takes 3 s longer to end than its victims' do (a poststop hook of the
     * runtime, as GPU and network hooks can be slow), so its client's exit reaches runjob after
     * theirs: the report still names the culprit, from its container's own exit code and end time,
     * and never calls it stopped. Culprit on either node, victims on both.
     */
    @Test
    void theRootCauseIsTheCulpritsOwnExitNotAVictimWhoseContainerEndedFirst() throws Exception {
        Path hooks = Files.createDirectories(tmp.resolve("hooks"));
        Path flag = jobs.pids.resolve("slow-teardown");
        Files.writeString(hooks.resolve("slow.json"), "{\"version\": \"1.0.0\", \"hook\": {\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", "
                + "\"rm " + flag + " 2>/dev/null && sleep 3; exit 0\"]}, \"when\": {\"always\": true}, \"stages\": [\"poststop\"]}\n");
        String slow = "environment: {container: {image: '" + image + "', mounts: ['/usr:/usr:ro', '" + jobs.pids + ":" + jobs.pids + "'], "
                + "options: ['--hooks-dir', '" + hooks + "']}}\n";
        for (int culprit : List.of(1, 2)) {
            Path job = jobs.job("cculprit" + culprit, jobs.node(jobs.bed.host(1), 2) + jobs.node(jobs.bed.host(2), 2), jobs.worker("culprit.py"),
                    List.of("python3", "culprit.py"), slow + "rendezvous: {port: auto}\nfailure: {grace_period_s: 5}\n",
                    Map.of("CULPRIT", Integer.toString(culprit), "CULPRIT_CODE", "7", "SLOW_TEARDOWN", flag.toString()));
            Cli r = jobs.run(job);
            assertThat(r.code()).as(r.err()).isEqualTo(1);
            assertThat(flag).as("the culprit's teardown took the hook's 3 s").doesNotExist();
            String node = culprit < 2 ? "h1" : "h2";
            assertThat(r.err()).as(r.err()).contains("root cause: rank " + culprit + " (local rank " + (culprit % 2) + ") on node " + node + ": exit 7")
                    .containsPattern("(?m)^" + node + " +" + culprit + " +" + (culprit % 2) + " +failed +exit 7 ");
            noContainerLeft(runId("cculprit" + culprit));
            for (int rank = 0; rank < 4; rank++) {
                Files.deleteIfExists(jobs.pids.resolve("rank-" + rank + ".pid"));
            }
        }
    }

    @Test
    void stopOfADetachedRunAndKillOfAnAgentLeaveNoContainer() throws Exception {
        Path detached = job("cstop", jobs.worker("sleeper.py"), List.of("python3", "sleeper.py"), "failure: {grace_period_s: 1}\n", Map.of());
        Cli detach = jobs.run(detached, "--detach");
        assertThat(detach.code()).as(detach.err()).isZero();
        String id = detach.out().strip();
        List<Long> pids = jobs.awaitPids(3, Duration.ofSeconds(90));
        toClean.addAll(pids);
        String logs = jobs.logs.toString();
        Poll.until(() -> Cli.run(System.getenv(), "status", id, "--logs-dir", logs).out()
                .matches("(?s).*h1 +0  running .*h2 +1  running .*h3 +2  running .*"), Duration.ofSeconds(20), "status to show every rank running");
        // the stack hook reaches Python inside the container: host pids, its directory mounted
        Cli stacks = Cli.run(System.getenv(), "stacks", id, "--logs-dir", logs);
        assertThat(stacks.code()).as(stacks.err()).isZero();
        assertThat(stacks.out()).containsPattern("\n  rank 0: sleep_forever \\(common.py:\\d+\\)\n")
                .containsPattern("\n  rank 2: sleep_forever \\(common.py:\\d+\\)\n");
        Cli stop = Cli.run(System.getenv(), "stop", id, "--logs-dir", logs);
        assertThat(stop.code()).as(stop.err()).isZero();
        Pids.awaitGone(pids, Duration.ofSeconds(10), "every rank after stop");
        noContainerLeft(id.substring(id.indexOf('/') + 1));
        for (String f : List.of("rank-0.pid", "rank-1.pid", "rank-2.pid")) {
            Files.deleteIfExists(jobs.pids.resolve(f));
        }

        Path killed = job("ckill", jobs.worker("sleeper.py"), List.of("python3", "sleeper.py"), "failure: {grace_period_s: 1}\n",
                Map.of("IGNORE_TERM", "1"));
        Process runjob = jobs.start(killed);
        List<Long> ranks = jobs.awaitPids(3, Duration.ofSeconds(90));
        toClean.addAll(ranks);
        long agent = agentOf(ranks.get(1)).orElseThrow();
        ProcessHandle.of(agent).orElseThrow().destroyForcibly();
        assertThat(runjob.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(runjob.exitValue()).isEqualTo(1);
        assertThat(jobs.stderrOf(killed)).contains("on node h2: lost: node h2 lost");
        Pids.awaitGone(ranks, Duration.ofSeconds(10), "every rank: h2's by its watchdog, the others by fail-fast");
        noContainerLeft(runId("ckill"));
    }

    /** The agent a containerised rank belongs to: the nearest ancestor that is runjob's agent JVM (conmon is its child). */
    private static Optional<Long> agentOf(long pid) {
        Optional<ProcessHandle> p = ProcessHandle.of(pid);
        while (p.isPresent()) {
            String cmd = p.get().info().commandLine().orElse("");
            if (cmd.contains("java") && cmd.contains(" agent")) {
                return Optional.of(p.get().pid());
            }
            p = p.get().parent();
        }
        return Optional.empty();
    }
}
