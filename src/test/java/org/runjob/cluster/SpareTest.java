package org.runjob.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
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

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code spares:} on real sshd hosts: a trainer on h1-h3 that saves its step to a directory every
 * node shares after each one, with h4 as the spare. A lost node's place goes to a spare that fits
 * (same node rank, ranks and world size; the master's address when it was the master), and the
 * run finishes every step; a spare that does not fit is passed over and the node is tried again;
 * without a spare, a restart waits up to {@code failure.wait_for_node_s} for the lost node.
 */
@OnSshTestbed
class SpareTest {

    @TempDir
    Path tmp;

    ClusterJobs jobs;
    @RegisterExtension
    final Leftovers toClean = new Leftovers();

    @BeforeEach
    void setUp() throws Exception {
        jobs = new ClusterJobs(tmp);
    }

    @AfterEach
    void links() throws Exception {
        jobs.reconnectAll();
    }

    /** Nodes h1-h3 of one worker each, the given spare, one restart; 40 steps of 0.25 s saved to a shared directory. */
    private Path withSpare(String name, String spare) throws IOException {
        return job(name, "spares:\n" + spare + "failure: {max_restarts: 1, grace_period_s: 1, heartbeat_timeout_s: 4}\n");
    }

    private Path job(String name, String extra) throws IOException {
        return job(name, 1, extra);
    }

    /** h1 and h2 of one worker, h3 of {@code h3Workers}. */
    private Path job(String name, int h3Workers, String extra) throws IOException {
        Path ckpt = Files.createDirectories(tmp.resolve("ckpt"));
        return jobs.job(name, jobs.node(jobs.bed.host(1), 1) + jobs.node(jobs.bed.host(2), 1) + jobs.node(jobs.bed.host(3), h3Workers),
                jobs.worker("steps.py"), List.of("python3", "steps.py"), extra,
                Map.of("CKPT", ckpt.toString(), "STEPS", "40", "STEP_S", "0.25"));
    }

    private String stderrSoFar(Path job) {
        try {
            return jobs.stderrOf(job);
        } catch (IOException e) {
            return "";
        }
    }

    private int savedStep(int rank) {
        return ClusterJobs.savedStep(tmp.resolve("ckpt"), rank);
    }

    /**
     * After {@code job} lost {@code lost}: {@code runjob nodes} lists it with its reason, the job's
     * next check has the spare stand in for it, the job without its spare is refused (exit 3),
     * and {@code runjob nodes --clear} makes it usable again.
     */
    private void quarantinedUntilCleared(Path job, SshTestbed.Host lost) throws IOException, InterruptedException {
        Cli nodes = Cli.runNow(System.getenv(), "nodes", "-o", "json");
        assertThat(nodes.code()).as(nodes.err()).isZero();
        JsonNode listed = JsonMapper.builder().build().readTree(nodes.out());
        assertThat(listed).hasSize(1);
        assertThat(List.of(listed.get(0).path("node").asString(), listed.get(0).path("machine").asString(), listed.get(0).path("job").asString()))
                .containsExactly(lost.name(), lost.machine(), "spare");
        assertThat(listed.get(0).path("reason").asString()).startsWith("lost: its agent answered no heartbeat for 4 s");
        Cli table = Cli.runNow(System.getenv(), "nodes");
        assertThat(table.out()).containsPattern("(?m)^" + lost.name() + " +" + Pattern.quote(lost.machine()) + " +\\S+ +\\S+ +lost: its agent")
                .endsWith("runjob nodes --clear NODE makes one usable again\n");
        Cli check = Cli.runNow(System.getenv(), "check", job.toString());
        assertThat(check.code()).as(check.err()).isZero();
        assertThat(check.err()).contains("runjob: note: spare h4 stands in for node " + lost.name() + ", quarantined since ")
                .contains("(runjob nodes --clear " + lost.name() + " uses it again)");
        Path alone = job("nospare", "failure: {max_restarts: 1}\n");
        Cli refused = Cli.runNow(System.getenv(), "check", alone.toString());
        assertThat(refused.code()).as(refused.err()).isEqualTo(3);
        assertThat(refused.err()).contains("runjob: node " + lost.name() + " is quarantined since ")
                .contains("; no spare fits its place. Use it again with: runjob nodes --clear " + lost.name() + "\n");
        Cli cleared = Cli.runNow(System.getenv(), "nodes", "--clear", lost.name());
        assertThat(cleared.code()).as(cleared.err()).isZero();
        assertThat(cleared.out()).isEqualTo("cleared node " + lost.name() + " (" + lost.machine() + ")\n");
        assertThat(Cli.runNow(System.getenv(), "nodes", "--clear", lost.name()).code()).isEqualTo(2);
        assertThat(Cli.runNow(System.getenv(), "nodes").out()).isEqualTo("no node is quarantined\n");
        jobs.bed.link(lost, true);
        Cli usedAgain = Cli.runNow(System.getenv(), "check", alone.toString());
        assertThat(usedAgain.code()).as(usedAgain.err()).isZero();
        assertThat(usedAgain.err()).doesNotContain("quarantined");
    }

    @Test
    void aSpareTakesTheMastersPlaceWhenItsLinkIsCutAndTheRunFinishesEveryStep() throws Exception {
        SshTestbed.Host h1 = jobs.bed.host(1);
        SshTestbed.Host h4 = jobs.bed.host(4);
        Path job = withSpare("spare", jobs.node(h4, 1));
        Process runjob = toClean.add(jobs.start(job));
        List<Long> first = jobs.awaitPids(3, Duration.ofSeconds(90));
        toClean.addAll(first);
        Poll.until(() -> savedStep(0) >= 2, Duration.ofSeconds(30), "rank 0 to save step 2");
        jobs.bed.link(h1, false);
        assertThat(runjob.waitFor(120, TimeUnit.SECONDS)).as("runjob ends: %s", stderrSoFar(job)).isTrue();
        String err = jobs.stderrOf(job);
        String out = Files.readString(tmp.resolve(job.getFileName() + ".out"));
        assertThat(runjob.exitValue()).as(err).isZero();
        assertThat(err).contains("spare h4 stands in for node h1 (node rank 0) from attempt 1: h1 was lost (its agent answered no heartbeat for 4 s");
        // the spare runs rank 0 as node rank 0 and is the master: the others' MASTER_ADDR is its address now
        Matcher resumed = Pattern.compile("(?m)^\\[h4/0#1] rank 0 of 3 attempt 1 on h4 node rank 0 master " + Pattern.quote(h4.address())
                + " resumes at step (\\d+)$").matcher(out);
        assertThat(resumed.find()).as(out).isTrue();
        assertThat(Integer.parseInt(resumed.group(1))).as("resumed from the saved step").isGreaterThanOrEqualTo(2);
        assertThat(out).contains("[h2/1#1] rank 1 of 3 attempt 1 on h2 node rank 1 master " + h4.address() + " resumes at step ")
                .contains("[h3/2#1] rank 2 of 3 attempt 1 on h3 node rank 2 master " + h4.address() + " resumes at step ");
        for (String line : List.of("[h4/0#1] rank 0 done at step 40", "[h2/1#1] rank 1 done at step 40", "[h3/2#1] rank 2 done at step 40")) {
            assertThat(out).contains(line + "\n");
        }
        Path folder = NodeSideTest.runFolder("spare", jobs.logs);
        JsonNode summary = JsonMapper.builder().build().readTree(Files.readString(folder.resolve("summary.json")));
        assertThat(summary.path("result").asString()).isEqualTo("succeeded");
        JsonNode standIn = summary.path("stand_ins").get(0);
        assertThat(summary.path("stand_ins")).hasSize(1);
        assertThat(List.of(standIn.path("spare").asString(), standIn.path("node").asString(), standIn.path("node_rank").asString(),
                standIn.path("attempt").asString())).containsExactly("h4", "h1", "0", "1");
        assertThat(summary.path("attempts").get(1).path("stand_ins")).hasSize(1);
        List<String> nodes = new ArrayList<>();
        summary.path("attempts").get(1).path("ranks").forEach(r -> nodes.add(r.path("node").asString()));
        assertThat(nodes).containsExactly("h4", "h2", "h3");
        assertThat(summary.path("recovery")).hasSize(1);
        assertThat(summary.path("recovery").get(0).path("attempt").asInt()).isEqualTo(1);
        assertThat(summary.path("recovery").get(0).path("relaunch_s").isNumber()).isTrue();
        // steps.py reports its steps: goodput is training not redone (40 steps of 0.25 s at most, over the run's wall time)
        assertThat(summary.path("goodput_basis").asString()).isEqualTo("steps");
        assertThat(summary.path("goodput").asDouble()).isBetween(0.1, 1.0);
        assertThat(summary.path("redone_steps").asDouble()).isBetween(0.0, 40.0);
        assertThat(err).containsPattern("\nattempt 1 began \\d+\\.\\ds after attempt 0 failed \\(stop \\d+\\.\\ds, replace \\d+\\.\\ds\\), its workers"
                + " all running \\d+\\.\\ds later\n").containsPattern("succeeded after 2 attempts in \\d+\\.\\ds, \\d+% of it useful training \\(steps not redone\\); logs in ");
        // the recovery as it happened, line by line
        List<String> events = new ArrayList<>();
        for (String line : Files.readAllLines(folder.resolve("events.jsonl"))) {
            JsonNode e = JsonMapper.builder().build().readTree(line);
            events.add(e.path("event").asString() + " " + e.path("attempt").asString() + " " + e.path("nodes") + e.path("result").asString("")
                    + (e.has("reason") ? e.path("node").asString() + " " + e.path("reason").asString().replaceAll(" for .*", "") : ""));
        }
        assertThat(events).containsExactly("attempt_start 0 [\"h1\",\"h2\",\"h3\"]", "attempt_end 0 failed",
                "quarantine  h1 lost: its agent answered no heartbeat",
                "stand_in 1 h1 its agent answered no heartbeat", "attempt_start 1 [\"h4\",\"h2\",\"h3\"]",
                "attempt_end 1 succeeded");
        // status says what became of each attempt, from events.jsonl
        Cli status = Cli.run(System.getenv(), "status", folder.toString());
        assertThat(status.out()).as(status.err()).containsPattern("\nattempt 0 failed at \\d\\d:\\d\\d:\\d\\d: rank 0: lost: its agent answered"
                + " no heartbeat for 4 s \\(stopped, hung, or its link is gone\\); lost h1\n  spare h4 stands in for node h1 \\(node rank 0\\)"
                + " from attempt 1\nattempt 1 succeeded at \\d\\d:\\d\\d:\\d\\d\ngoodput 0\\.\\d\\d: training not redone \\(\\d+ steps redone\\),"
                + " over the run's wall time\n");
        assertThat(err).containsPattern("runjob: node h1 \\(" + Pattern.quote(h1.machine()) + "\\) is quarantined until \\S+ \\(failure.quarantine_s"
                + " 3600\\): lost: its agent answered no heartbeat for 4 s");
        quarantinedUntilCleared(job, h1);
        // attempt 1's workers ended with the run; h1's, cut off, is stopped by its agent once the link is back
        List<Long> second = jobs.awaitPids(3, Duration.ofSeconds(1));
        assertThat(Pids.living(second)).isEmpty();
        jobs.bed.link(h1, true);
        Pids.awaitGone(first, Duration.ofSeconds(30), "attempt 0's workers, h1's after its link came back");
    }

    /** h3's agent, found by its workdir on the agent's command line. */
    private ProcessHandle agentOfH3() {
        List<ProcessHandle> agents = ProcessHandle.allProcesses().filter(p -> {
            String cmd = p.info().commandLine().orElse("");
            return p.info().command().orElse("").endsWith("/java") && cmd.contains("org.runjob.agent.AgentMain agent")
                    && cmd.contains(tmp.resolve("work-h3").toString());
        }).toList();
        assertThat(agents).as("h3's agent").hasSize(1);
        return agents.get(0);
    }

    @Test
    void aSpareThatDoesNotFitIsPassedOverAndTheLostNodeIsWaitedFor() throws Exception {
        // the spare fits h1 and h2, not h3 (validation refuses a spare that could fit no node)
        SshTestbed.Host h3 = jobs.bed.host(3);
        Path job = job("nofit", 2, "spares:\n" + jobs.node(jobs.bed.host(4), 1)
                + "failure: {max_restarts: 1, grace_period_s: 1, heartbeat_timeout_s: 4, wait_for_node_s: 60}\n");
        Process runjob = toClean.add(jobs.start(job));
        List<Long> first = jobs.awaitPids(4, Duration.ofSeconds(90));
        toClean.addAll(first);
        Poll.until(() -> savedStep(2) >= 2, Duration.ofSeconds(30), "rank 2 to save step 2");
        jobs.bed.link(h3, false);
        Poll.until(() -> stderrSoFar(job).contains("spare h4 does not fit node h3's place: it runs 1 worker, the node ran 2"),
                Duration.ofSeconds(60), "the spare to be passed over");
        jobs.bed.link(h3, true);
        assertThat(runjob.waitFor(120, TimeUnit.SECONDS)).as("runjob ends: %s", stderrSoFar(job)).isTrue();
        String err = jobs.stderrOf(job);
        String out = Files.readString(tmp.resolve(job.getFileName() + ".out"));
        assertThat(runjob.exitValue()).as(err).isZero();
        assertThat(err).contains("runjob: node h3 is lost: a fresh connection failed too (").doesNotContain("spare h4 stands in");
        for (int rank : List.of(2, 3)) {
            assertThat(out).contains("[h3/" + rank + "#1] rank " + rank + " of 4 attempt 1 on h3 node rank 2 master " + jobs.bed.host(1).address()
                    + " resumes at step ").contains("[h3/" + rank + "#1] rank " + rank + " done at step 40\n");
        }
        Pids.awaitGone(first, Duration.ofSeconds(10), "attempt 0's workers");
    }

    /**
     * kill -9 of a node's agent (as the OOM killer does) is no evidence about the machine: a fresh
     * connection reaches it, so the restart runs there, the spare stays unused and nothing is quarantined.
     */
    @Test
    void aKilledAgentCostsNoNodeTheRestartRunsThereAndNothingIsQuarantined() throws Exception {
        Path job = job("agentkill", 2, "spares:\n" + jobs.node(jobs.bed.host(4), 2)
                + "failure: {max_restarts: 1, grace_period_s: 1, heartbeat_timeout_s: 4}\n");
        Process runjob = toClean.add(jobs.start(job));
        List<Long> first = jobs.awaitPids(4, Duration.ofSeconds(90));
        toClean.addAll(first);
        Poll.until(() -> savedStep(2) >= 2, Duration.ofSeconds(30), "rank 2 to save step 2");
        agentOfH3().destroyForcibly();
        assertThat(runjob.waitFor(120, TimeUnit.SECONDS)).as("runjob ends: %s", stderrSoFar(job)).isTrue();
        String err = jobs.stderrOf(job);
        String out = Files.readString(tmp.resolve(job.getFileName() + ".out"));
        assertThat(runjob.exitValue()).as(err).isZero();
        assertThat(err).containsPattern("runjob: node h3: its agent failed \\(node h3 lost \\([^\\n]*\\)\\), but the node answers on a fresh"
                + " connection: it is not lost; the restart runs there\n").doesNotContain("stands in").doesNotContain("quarantined");
        for (int rank : List.of(2, 3)) {
            assertThat(out).contains("[h3/" + rank + "#1] rank " + rank + " done at step 40\n");
        }
        assertThat(Cli.runNow(System.getenv(), "nodes").out()).isEqualTo("no node is quarantined\n");
        Pids.awaitGone(first, Duration.ofSeconds(10), "attempt 0's workers");
    }

    /**
     * A restart whose login to h3 takes 20 s (a login shell waiting on a lock or a slow NFS home):
     * h1's agent, started at once and idle meanwhile, is judged only from its attempt's start, so
     * with a 5 s heartbeat timeout it is not "lost", and the restart succeeds on both nodes.
     */
    @Test
    void aTwentySecondLoginOnOneNodeDuringARestartCostsTheOtherNodeNothing() throws Exception {
        Path go = tmp.resolve("go");
        Path job = jobs.job("slowlogin", jobs.node(jobs.bed.host(1), 1) + jobs.node(jobs.bed.host(3), 1), jobs.worker("slow_restart.py"),
                List.of("python3", "slow_restart.py"), "failure: {max_restarts: 1, grace_period_s: 1, heartbeat_timeout_s: 5}\n",
                Map.of("GO_FILE", go.toString()));
        Process runjob = toClean.add(jobs.start(job));
        toClean.addAll(jobs.awaitPids(2, Duration.ofSeconds(90)));
        Path slow = jobs.bed.slowLoginFlag();
        Files.writeString(slow, "");
        try {
            Files.writeString(go, "");
            Poll.until(() -> stderrSoFar(job).contains("restarting the whole group"), Duration.ofSeconds(30), "the restart");
            assertThat(runjob.waitFor(120, TimeUnit.SECONDS)).as("runjob ends: %s", stderrSoFar(job)).isTrue();
        } finally {
            Files.deleteIfExists(slow);
        }
        String err = jobs.stderrOf(job);
        assertThat(runjob.exitValue()).as(err).isZero();
        assertThat(err).doesNotContain("heartbeat").doesNotContain(" lost").doesNotContain("quarantined");
        assertThat(Files.readString(tmp.resolve(job.getFileName() + ".out"))).contains("[h1/0#1] rank 0 attempt 1 done\n")
                .contains("[h3/1#1] rank 1 attempt 1 done\n");
    }

    @Test
    void withoutASpareARestartWaitsForTheLostNodeToAnswerAgain() throws Exception {
        SshTestbed.Host h3 = jobs.bed.host(3);
        Path job = job("waits", "failure: {max_restarts: 1, grace_period_s: 1, heartbeat_timeout_s: 4, wait_for_node_s: 60}\n");
        Process runjob = toClean.add(jobs.start(job));
        List<Long> first = jobs.awaitPids(3, Duration.ofSeconds(90));
        toClean.addAll(first);
        Poll.until(() -> savedStep(2) >= 2, Duration.ofSeconds(30), "rank 2 to save step 2");
        jobs.bed.link(h3, false);
        Poll.until(() -> stderrSoFar(job).contains("runjob: node h3 was lost and no spare stands in: waiting up to 60 s for it to answer"
                + " (failure.wait_for_node_s)\n"), Duration.ofSeconds(30), "the restart to wait for h3");
        jobs.bed.link(h3, true);
        assertThat(runjob.waitFor(120, TimeUnit.SECONDS)).as("runjob ends: %s", stderrSoFar(job)).isTrue();
        String err = jobs.stderrOf(job);
        assertThat(runjob.exitValue()).as(err).isZero();
        assertThat(err).contains("runjob: node h3 answers again: the restart runs there\n");
        assertThat(Files.readString(tmp.resolve(job.getFileName() + ".out"))).contains("[h3/2#1] rank 2 done at step 40\n");
        Pids.awaitGone(first, Duration.ofSeconds(10), "attempt 0's workers");
    }

    @Test
    void withMinNodesARestartRunsWithoutTheLostMasterOnFewerRanks() throws Exception {
        SshTestbed.Host h1 = jobs.bed.host(1);
        String h2 = jobs.bed.host(2).address();
        Path job = job("fewer", "failure: {max_restarts: 1, grace_period_s: 1, heartbeat_timeout_s: 4, min_nodes: 2}\n");
        Process runjob = toClean.add(jobs.start(job));
        List<Long> first = jobs.awaitPids(3, Duration.ofSeconds(90));
        toClean.addAll(first);
        Poll.until(() -> savedStep(0) >= 2, Duration.ofSeconds(30), "rank 0 to save step 2");
        jobs.bed.link(h1, false);
        assertThat(runjob.waitFor(120, TimeUnit.SECONDS)).as("runjob ends: %s", stderrSoFar(job)).isTrue();
        String err = jobs.stderrOf(job);
        String out = Files.readString(tmp.resolve(job.getFileName() + ".out"));
        assertThat(runjob.exitValue()).as(err).isZero();
        assertThat(err).contains("runjob: attempt 1 runs on 2 of 3 nodes, without h1 (failure.min_nodes 2): world size 2, was 3\n")
                .contains("\nattempt 1 ran without h1 on 2 ranks (failure.min_nodes)\n");
        // h2 is node rank 0 and the master now; ranks are contiguous again
        assertThat(out).contains("[h2/0#1] rank 0 of 2 attempt 1 on h2 node rank 0 master " + h2 + " resumes at step ")
                .contains("[h3/1#1] rank 1 of 2 attempt 1 on h3 node rank 1 master " + h2 + " resumes at step ")
                .contains("[h2/0#1] rank 0 done at step 40\n").contains("[h3/1#1] rank 1 done at step 40\n");
        Path folder = NodeSideTest.runFolder("fewer", jobs.logs);
        JsonNode summary = JsonMapper.builder().build().readTree(Files.readString(folder.resolve("summary.json")));
        assertThat(summary.path("attempts").get(1).path("dropped").toString()).isEqualTo("[\"h1\"]");
        assertThat(summary.path("attempts").get(1).path("ranks")).hasSize(2);
        assertThat(Files.readString(folder.resolve("events.jsonl"))).contains("\"event\":\"shrink\",\"attempt\":1,\"world_size\":2,"
                + "\"dropped\":[\"h1\"]}");
        jobs.bed.link(h1, true);
        Pids.awaitGone(first, Duration.ofSeconds(30), "attempt 0's workers, h1's after its link came back");
    }

    @Test
    void aNodeThatFailsItsHealthCheckIsQuarantinedAndASpareRunsInItsPlace() throws Exception {
        Path ckpt = Files.createDirectories(tmp.resolve("ckpt"));
        String check = "test \\\"$RUNJOB_NODE\\\" != h2 || { echo disk full on $RUNJOB_NODE; exit 1; }";
        Path job = jobs.job("health", jobs.node(jobs.bed.host(1), 1) + jobs.node(jobs.bed.host(2), 1) + jobs.node(jobs.bed.host(3), 1),
                jobs.worker("steps.py"), List.of("bash", "-c", "test $RUNJOB_ATTEMPT$RANK != 02 || exit 7; exec python3 steps.py"),
                "spares:\n" + jobs.node(jobs.bed.host(4), 1) + "failure: {max_restarts: 1, grace_period_s: 1, health_check: [\"" + check + "\"]}\n",
                Map.of("CKPT", ckpt.toString(), "STEPS", "8", "STEP_S", "0.25"));
        Process runjob = toClean.add(jobs.start(job));
        assertThat(runjob.waitFor(120, TimeUnit.SECONDS)).as("runjob ends: %s", stderrSoFar(job)).isTrue();
        String err = jobs.stderrOf(job);
        assertThat(runjob.exitValue()).as(err).isZero();
        String why = "health check 'test \"$RUNJOB_NODE\" != h2 || { echo disk full on $RUNJOB_NODE; exit 1; }' exited 1: disk full on h2";
        assertThat(err).contains("node h2 failed its health check before attempt 1: " + why)
                .contains("node h2 (" + jobs.bed.host(2).machine() + ") is quarantined until ")
                .contains("spare h4 stands in for node h2 (node rank 1) from attempt 1: ");
        String out = Files.readString(tmp.resolve(job.getFileName() + ".out"));
        assertThat(out).contains("[h4/1#1] rank 1 of 3 attempt 1 on h4 node rank 1 ");
        for (String line : List.of("[h1/0#1] rank 0 done at step 8", "[h4/1#1] rank 1 done at step 8", "[h3/2#1] rank 2 done at step 8")) {
            assertThat(out).contains(line + "\n");
        }
        Path folder = NodeSideTest.runFolder("health", jobs.logs);
        List<String> events = new ArrayList<>();
        for (String line : Files.readAllLines(folder.resolve("events.jsonl"))) {
            JsonNode e = JsonMapper.builder().build().readTree(line);
            events.add(e.path("event").asString() + " " + e.path("node").asString("") + " " + e.path("nodes") + e.path("reason").asString(""));
        }
        assertThat(events).containsExactly("attempt_start  [\"h1\",\"h2\",\"h3\"]", "attempt_end  ", "health_check_failed h2 " + why,
                "quarantine h2 health check: " + why, "stand_in h2 " + why, "attempt_start  [\"h1\",\"h4\",\"h3\"]", "attempt_end  ");
        Cli nodes = Cli.runNow(System.getenv(), "nodes", "-o", "json");
        JsonNode listed = JsonMapper.builder().build().readTree(nodes.out());
        assertThat(listed).hasSize(1);
        assertThat(List.of(listed.get(0).path("node").asString(), listed.get(0).path("reason").asString()))
                .containsExactly("h2", "health check: " + why);
    }
}
