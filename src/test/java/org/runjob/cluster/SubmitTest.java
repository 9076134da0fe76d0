package org.runjob.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.testbed.LabPage;
import org.runjob.testbed.Leftovers;
import org.runjob.testbed.OnSshTestbed;
import org.runjob.testbed.Pids;
import org.runjob.testbed.Poll;
import org.runjob.testbed.RunjobJvm;
import org.runjob.testbed.SshTestbed;

import tools.jackson.databind.JsonNode;

/**
 * {@code runjob submit} on the SSH testbed: the launching machine is h4's network namespace, the
 * job runs on h1 (master) and h2. h1's workdir and its submitted-runs folder are tmpfs mounts in
 * h1's own mount namespace, so the launcher can reach the run only through runjob, never through
 * the testbed's shared disk.
 */
@OnSshTestbed
class SubmitTest {

    private static final int STEPS = 100;

    @RegisterExtension
    final Leftovers toClean = new Leftovers();

    @TempDir
    Path dir;

    private ClusterJobs jobs;
    private SshTestbed.Host launcher;
    private final List<Path> privateMounts = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        jobs = new ClusterJobs(dir);
        launcher = jobs.bed.host(4);
        SshTestbed.Host master = jobs.bed.host(1);
        for (Path p : List.of(Path.of(System.getProperty("user.home"), ".runjob", "submitted"), dir.resolve("work-" + master.name()))) {
            Files.createDirectories(p);
            jobs.bed.inMounts(master, "mount", "-t", "tmpfs", "-o", "mode=700,size=2g", "tmpfs", p.toString());
            privateMounts.add(p);
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        jobs.bed.link(launcher, true);
        for (Path p : privateMounts) {
            jobs.bed.inMounts(jobs.bed.host(1), "umount", "-l", p.toString());
        }
    }

    private Path job(String name, String script, Map<String, String> env) throws IOException {
        SshTestbed.Host h1 = jobs.bed.host(1);
        SshTestbed.Host h2 = jobs.bed.host(2);
        // a 5 s heartbeat timeout: what the tests of a lost launcher or master wait for
        return jobs.job(name, jobs.node(h1, 1) + jobs.node(h2, 1), jobs.worker(script), List.of("python3", "-u", script),
                "failure: {heartbeat_timeout_s: 5}\n", env);
    }

    /** runjob ARGS run as the launching machine (h4's namespace), in {@code cwd}; its stdout, stderr and exit code. */
    private Result runjob(Path cwd, Duration timeout, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", launcher.namespace()));
        cmd.addAll(RunjobJvm.command(List.of(args)));
        Path out = Files.createTempFile(dir, "out-", ".txt");
        Path err = Files.createTempFile(dir, "err-", ".txt");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(cwd.toFile()).redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().put("XDG_STATE_HOME", dir.resolve("state").toString());
        Process p = pb.start();
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("runjob " + String.join(" ", args) + " did not end within " + timeout + ": "
                    + Files.readString(err));
        }
        return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    record Result(int code, String out, String err) {
    }

    private static String pageSays(LabPage page, String path) {
        try {
            return page.get(path).body();
        } catch (Exception e) {
            return e.toString();
        }
    }

    private int step(int rank) {
        try {
            return Integer.parseInt(Files.readString(jobs.pids.resolve("rank-" + rank + ".step")).trim());
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
    }

    /** Processes whose command line has every one of {@code words} as an argument. */
    private static List<ProcessHandle> processesWith(String... words) {
        return ProcessHandle.allProcesses().filter(p -> p.info().arguments().map(a -> List.of(a).containsAll(List.of(words))).orElse(false))
                .toList();
    }

    /** Processes whose command line names {@code runId}: the coordinator, node hosts and agents of that run. */
    private static List<Long> processesOf(String runId) {
        return processesWith(runId).stream().map(ProcessHandle::pid).toList();
    }

    record Running(String runId, List<Long> workers) {
    }

    /** Submits {@code job} (exit 0) and waits for its 2 workers; they and every process of the run are cleaned up after the test. */
    private Running submitRunning(Path job, String... options) throws Exception {
        List<String> args = new ArrayList<>(List.of("submit", job.toString()));
        args.addAll(List.of(options));
        Result submitted = runjob(dir, Duration.ofSeconds(120), args.toArray(String[]::new));
        assertThat(submitted.code()).as(submitted.err()).isZero();
        if (options.length > 0 && options[options.length - 1].startsWith("logs.dir=")) {
            assertThat(submitted.err()).contains("runjob: note: logs.dir (" + options[options.length - 1].substring(9)
                    + ") does not hold a submitted run: its folder is on h1;");
        }
        String runId = submitted.out().trim();
        List<Long> workers = jobs.awaitPids(2, Duration.ofSeconds(30));
        toClean.addAll(workers);
        toClean.addAll(processesOf(runId));
        return new Running(runId, workers);
    }

    @Test
    void aSubmittedRunOutlivesItsLauncherAndIsFollowedFromIt() throws Exception {
        // the workers hold after their last step until the test lets them end: runs and status see a running run
        Path job = job("outlive", "progress.py", Map.of("STEPS", Integer.toString(STEPS), "HOLD", "release"));
        Result submitted = runjob(dir, Duration.ofSeconds(120), "submit", job.toString());
        assertThat(submitted.code()).as(submitted.err()).isZero();
        String runId = submitted.out().trim();
        assertThat(runId).matches("\\d{8}-\\d{6}-[0-9a-f]{4}");
        toClean.addAll(jobs.awaitPids(2, Duration.ofSeconds(30)));
        toClean.addAll(processesOf(runId));
        assertThat(submitted.err()).contains("is submitted", "its coordinator runs on h1");

        // the launching machine leaves: for twice the job's 5 s heartbeat timeout
        jobs.bed.link(launcher, false);
        int from = Math.min(step(0), step(1));
        Poll.until(() -> step(0) >= from + 50 && step(1) >= from + 50, Duration.ofSeconds(60),
                "both ranks to make 50 steps (10 s) while the launcher is cut off");
        jobs.bed.link(launcher, true);

        Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
        Result runs = runjob(elsewhere, Duration.ofSeconds(30), "runs");
        assertThat(runs.code()).isZero();
        assertThat(runs.out()).containsPattern(runId + " +outlive +running on h1 ");
        // the lab's page lists it, asked on its master node, and shows its ranks from there
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("XDG_STATE_HOME", dir.resolve("state").toString());
        try (LabPage page = LabPage.start(dir.resolve("serve"), env, List.of("serve", "--port", "0"))) {
            Poll.until(() -> pageSays(page, "/api/runs").contains("\"run_id\":\"" + runId + "\",\"job\":\"outlive\",\"state\":\"running on h1\""),
                    Duration.ofSeconds(60), "the submitted run on the page", () -> pageSays(page, "/api/runs"));
            JsonNode shown = page.json("/api/run/" + runId);
            assertThat(shown.path("submitted").asBoolean()).isTrue();
            assertThat(shown.path("state").asString()).isEqualTo("running");
            assertThat(shown.path("rank_rows").size()).isEqualTo(2);
        }

        Result status = runjob(elsewhere, Duration.ofSeconds(60), "status", runId);
        assertThat(status.code()).as(status.err()).isZero();
        assertThat(status.out()).contains("run " + runId + " of job outlive");
        Files.writeString(jobs.pids.resolve("release"), "");

        Result logs = runjob(elsewhere, Duration.ofSeconds(90), "logs", "-f", runId);
        assertThat(logs.code()).as(logs.err()).isZero();
        for (int rank = 0; rank < 2; rank++) {
            String mine = ".*rank " + rank + " step \\d+";
            assertThat(logs.out().lines().filter(l -> l.matches(mine)).count()).as("rank " + rank + "'s lines").isEqualTo(STEPS);
        }
        Result done = runjob(elsewhere, Duration.ofSeconds(60), "status", runId);
        assertThat(done.out()).contains("succeeded");
        Poll.until(() -> processesOf(runId).isEmpty(), Duration.ofSeconds(30), "the run's coordinator, node hosts and agents to end");
    }

    @Test
    void aSubmittedRunGivesALostNodesPlaceToASpareThroughItsNodeHostFortySecondsIn() throws Exception {
        SshTestbed.Host h2 = jobs.bed.host(2);
        Path ckpt = Files.createDirectories(dir.resolve("ckpt"));
        Path job = jobs.job("spared", jobs.node(jobs.bed.host(1), 1) + jobs.node(h2, 1), jobs.worker("steps.py"), List.of("python3", "steps.py"),
                "spares:\n" + jobs.node(jobs.bed.host(3), 1) + "failure: {max_restarts: 1, grace_period_s: 1, heartbeat_timeout_s: 4}\n",
                Map.of("CKPT", ckpt.toString(), "STEPS", "180", "STEP_S", "0.25"));
        Result submitted = runjob(dir, Duration.ofSeconds(120), "submit", job.toString());
        assertThat(submitted.code()).as(submitted.err()).isZero();
        assertThat(submitted.err()).contains(": node hosts on 3 nodes, the coordinator on h1");
        String runId = submitted.out().trim();
        toClean.addAll(jobs.awaitPids(2, Duration.ofSeconds(30)));
        toClean.addAll(processesOf(runId));
        // the loss comes 40 s after the workers started (160 steps of 0.25 s): the spare, idle since preflight, must still be there
        Poll.until(() -> ClusterJobs.savedStep(ckpt, 1) >= 160, Duration.ofSeconds(90), "rank 1 to save step 160");
        jobs.bed.link(h2, false);
        try {
            Poll.until(() -> statusOf(runId).contains("succeeded (exit 0)"), Duration.ofSeconds(120), "the run to succeed on the spare",
                    () -> statusOf(runId));
        } finally {
            jobs.bed.link(h2, true);
        }
        assertThat(statusOf(runId)).contains("\n  spare h3 stands in for node h2 (node rank 1) from attempt 1\nattempt 1 succeeded at ");
        assertThat(ClusterJobs.savedStep(ckpt, 0)).isEqualTo(180);
        assertThat(ClusterJobs.savedStep(ckpt, 1)).isEqualTo(180);
        Poll.until(() -> processesOf(runId).isEmpty(), Duration.ofSeconds(30), "the run's coordinator, node hosts and agents to end");

        // h2's quarantine is kept on the master node h1, by its coordinator: seen, obeyed and cleared from the launching machine
        Result nodes = runjob(dir, Duration.ofSeconds(60), "nodes");
        assertThat(nodes.code()).as(nodes.err()).isZero();
        assertThat(nodes.out()).startsWith("kept on master node h1 (by your submitted runs' coordinator there):\n")
                .containsPattern("(?m)^h2 +" + Pattern.quote(h2.machine()) + " +\\S+ +" + runId + " +lost: ")
                .endsWith("runjob nodes --clear NODE makes one usable again\n");
        Result refused = runjob(dir, Duration.ofSeconds(120), "submit", job.toString(), "--coordinator", "h2");
        assertThat(refused.code()).as(refused.err()).isEqualTo(3);
        assertThat(refused.err()).contains("runjob: node h2, where the run's coordinator would start, is quarantined since ")
                .contains("; a submitted run's coordinator never starts on a quarantined machine: choose another with --coordinator,"
                        + " or use it again with: runjob nodes --clear h2\n");
        assertThat(refused.out()).isEmpty();
        assertThat(processesWith("--hosted")).isEmpty();
        Result cleared = runjob(dir, Duration.ofSeconds(60), "nodes", "--clear", "h2");
        assertThat(cleared.code()).as(cleared.err()).isZero();
        assertThat(cleared.out()).isEqualTo("cleared node h2 (" + h2.machine() + ") on master node h1\n");
        assertThat(runjob(dir, Duration.ofSeconds(60), "nodes").out()).isEqualTo("no node is quarantined\n");
    }

    @Test
    void withItsCoordinatorOnASpareARunOutlivesItsMasterNodesPowerLossOnAnotherSpare() throws Exception {
        SshTestbed.Host h1 = jobs.bed.host(1);
        SshTestbed.Host h3 = jobs.bed.host(3);
        SshTestbed.Host h4 = jobs.bed.host(4);
        Path ckpt = Files.createDirectories(dir.resolve("ckpt"));
        // h4, the launching machine here, is also the spare that coordinates; h3 the spare that stands in
        Path job = jobs.job("standby", jobs.node(h1, 1) + jobs.node(jobs.bed.host(2), 1), jobs.worker("steps.py"), List.of("python3", "steps.py"),
                "spares:\n" + jobs.node(h3, 1) + jobs.node(h4, 1) + "failure: {max_restarts: 1, grace_period_s: 1, heartbeat_timeout_s: 4}\n",
                Map.of("CKPT", ckpt.toString(), "STEPS", "40", "STEP_S", "0.25"));
        // h4 holds only the agent's runtime, as after any run with it as a node: the coordinator must not take it
        jobs.bed.forgetRuntimes();
        Path warm = jobs.job("warm", jobs.node(h4, 1), jobs.worker("flaky.py"), List.of("python3", "flaky.py"), "", Map.of());
        Cli warmed = jobs.run(warm);
        assertThat(warmed.code()).as(warmed.err()).isZero();
        Result unknown = runjob(dir, Duration.ofSeconds(60), "submit", job.toString(), "--coordinator", "h9");
        assertThat(unknown.code()).isEqualTo(2);
        assertThat(unknown.err()).isEqualTo("runjob: --coordinator h9: the job has no node or spare of that name; it has h1, h2, h3 (spare),"
                + " h4 (spare)\n");
        Result submitted = runjob(dir, Duration.ofSeconds(120), "submit", job.toString(), "--coordinator", "h4");
        assertThat(submitted.code()).as(submitted.err()).isZero();
        assertThat(submitted.err()).contains(": node hosts on 3 nodes, the coordinator on h4 (a spare: it runs no worker)\n")
                .contains("its coordinator runs on h4 (pid ");
        String runId = submitted.out().trim();
        List<Long> workers = jobs.awaitPids(2, Duration.ofSeconds(30));
        toClean.addAll(workers);
        toClean.addAll(processesOf(runId));
        List<ProcessHandle> coordinator = processesWith("--hosted", runId);
        assertThat(coordinator).hasSize(1);
        assertThat(inNamespace(coordinator.get(0).pid(), h4.namespace())).isTrue();
        Poll.until(() -> ClusterJobs.savedStep(ckpt, 0) >= 2, Duration.ofSeconds(30), "rank 0 to save step 2");
        // the master node loses power: its link first, then every process of the run on it, without a word
        jobs.bed.link(h1, false);
        try {
            List<ProcessHandle> onMaster = ProcessHandle.allProcesses().filter(p -> inNamespace(p.pid(), h1.namespace()))
                    .filter(p -> processesOf(runId).contains(p.pid()) || workers.contains(p.pid())).toList();
            assertThat(onMaster.size()).as("node host, agent and rank 0 on the master node, and no coordinator").isGreaterThanOrEqualTo(3);
            onMaster.forEach(ProcessHandle::destroyForcibly);
            Poll.until(() -> statusOf(runId).contains("succeeded (exit 0)"), Duration.ofSeconds(120), "the run to succeed without its master node",
                    () -> statusOf(runId));
        } finally {
            jobs.bed.link(h1, true);
        }
        String status = statusOf(runId);
        assertThat(status).contains("\n  spare h3 stands in for node h1 (node rank 0) from attempt 1\nattempt 1 succeeded at ");
        assertThat(ClusterJobs.savedStep(ckpt, 0)).isEqualTo(40);
        assertThat(ClusterJobs.savedStep(ckpt, 1)).isEqualTo(40);
        Result runs = runjob(dir, Duration.ofSeconds(60), "runs");
        assertThat(runs.out()).containsPattern(runId + " +standby +succeeded on h4 ");
        Poll.until(() -> processesOf(runId).isEmpty(), Duration.ofSeconds(30), "the run's coordinator, node hosts and agents to end");
    }

    private String statusOf(String runId) {
        try {
            return runjob(dir, Duration.ofSeconds(60), "status", runId).out();
        } catch (Exception e) {
            return e.toString();
        }
    }

    @Test
    void stopEndsASubmittedRunAndLeavesNothingAndPullBringsItsOutputsHere() throws Exception {
        SshTestbed.Host h1 = jobs.bed.host(1);
        SshTestbed.Host h2 = jobs.bed.host(2);
        // the run's directory on each node holds the shipped sleeper.py: the outputs the run brings into its folder at its end
        Path job = jobs.job("stopme", jobs.node(h1, 1) + jobs.node(h2, 1), jobs.worker("sleeper.py"), List.of("python3", "-u", "sleeper.py"),
                "outputs: [sleeper.py]\n", Map.of());
        Path logsDir = dir.resolve("named-logs");
        Running run = submitRunning(job, "--set", "logs.dir=" + logsDir);
        String runId = run.runId();
        List<Long> workers = run.workers();
        assertThat(processesOf(runId)).hasSizeGreaterThanOrEqualTo(5); // coordinator, 2 node hosts, 2 agents
        Result early = runjob(dir, Duration.ofSeconds(60), "pull", runId, "sleeper.py");
        assertThat(early.code()).as(early.err()).isEqualTo(2);
        assertThat(early.err()).contains("runjob: run " + runId + " is running: its outputs come from every node into its folder when it ends");

        Result stop = runjob(dir, Duration.ofSeconds(120), "stop", runId);
        assertThat(stop.code()).as(stop.out() + stop.err()).isZero();
        Pids.awaitGone(workers, Duration.ofSeconds(30), "the workers");
        Poll.until(() -> processesOf(runId).isEmpty(), Duration.ofSeconds(30), "the run's coordinator, node hosts and agents to end");
        // logs.dir does not hold a submitted run; --logs-dir still finds it, through the run index
        Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
        Result status = runjob(elsewhere, Duration.ofSeconds(60), "status", runId, "--logs-dir", logsDir.toString());
        assertThat(status.out()).as(status.err()).contains("interrupted");
        Result runs = runjob(elsewhere, Duration.ofSeconds(60), "runs");
        assertThat(runs.out()).containsPattern(runId + " +stopme +interrupted on h1 +\\S+ +\\d+\\.\\ds +130 ");
        // its end is kept here: with the launcher cut off from h1, runs shows it the same
        jobs.bed.link(launcher, false);
        Result cut = runjob(elsewhere, Duration.ofSeconds(60), "runs");
        jobs.bed.link(launcher, true);
        assertThat(cut.out()).containsPattern(runId + " +stopme +interrupted on h1 +\\S+ +\\d+\\.\\ds +130 ");

        // the master's run folder is in h1's own tmpfs: what arrives here came through runjob, from what the run's
        // coordinator brought there from every node when the run ended
        Result pull = runjob(elsewhere, Duration.ofSeconds(90), "pull", runId);
        assertThat(pull.code()).as(pull.err()).isZero();
        Path got = elsewhere.resolve(runId + "-outputs");
        String source = Files.readString(ClusterJobs.WORKERS.resolve("sleeper.py"));
        try (var all = Files.walk(got)) {
            assertThat(all.filter(Files::isRegularFile).map(p -> got.relativize(p).toString()).sorted().toList())
                    .containsExactly("h1/sleeper.py", "h2/sleeper.py");
        }
        assertThat(Files.readString(got.resolve("h1/sleeper.py"))).isEqualTo(source);
        assertThat(Files.readString(got.resolve("h2/sleeper.py"))).isEqualTo(source);
        assertThat(pull.err()).contains("runjob: 2 files (" + 2 * source.length() + " B) from master node h1 in ");
        Path one = dir.resolve("one");
        Result named = runjob(elsewhere, Duration.ofSeconds(90), "pull", runId, "sleeper.py", "nothing.txt", "--into", one.toString());
        assertThat(named.code()).as(named.err()).isZero();
        assertThat(named.err()).contains("runjob: outputs of node h1: nothing.txt: no such file\n");
        assertThat(Files.readString(one.resolve("h2/sleeper.py"))).isEqualTo(source);
        Result outside = runjob(elsewhere, Duration.ofSeconds(30), "pull", runId, "../../etc");
        assertThat(outside.code()).isEqualTo(2);
        assertThat(outside.err()).contains("runjob: '../../etc' is not inside the run's directory");
    }

    @Test
    void whenTheMasterNodeLosesPowerNothingOfTheRunIsLeftOnTheOtherNodes() throws Exception {
        Path job = job("powerless", "sleeper.py", Map.of());
        Running run = submitRunning(job);
        String runId = run.runId();
        SshTestbed.Host master = jobs.bed.host(1);
        List<ProcessHandle> coordinator = processesWith("--hosted", runId);
        assertThat(coordinator).hasSize(1);
        assertThat(inNamespace(coordinator.get(0).pid(), master.namespace())).isTrue();
        // power lost: the link goes first, then every process of the run on the node dies without a word
        jobs.bed.link(master, false);
        try {
            List<ProcessHandle> onMaster = ProcessHandle.allProcesses().filter(p -> inNamespace(p.pid(), master.namespace()))
                    .filter(p -> processesOf(runId).contains(p.pid()) || run.workers().contains(p.pid())).toList();
            assertThat(onMaster.size()).as("coordinator, node host, agent and rank 0 on the master node").isGreaterThanOrEqualTo(4);
            onMaster.forEach(ProcessHandle::destroyForcibly);
            // h2's agent hears no heartbeat for 5 s and stops rank 1; its node host, its program over and no one
            // connected, ends 20 s later (NodeHost's idle time): nothing of the run on any node after that and the grace
            Poll.until(() -> processesOf(runId).isEmpty() && Pids.living(run.workers()).isEmpty(), Duration.ofSeconds(60),
                    "nothing of a run whose master node lost power", () -> "left: " + processesOf(runId) + " " + Pids.living(run.workers()));
        } finally {
            jobs.bed.link(master, true);
        }
    }

    @Test
    void whenANodeHostIsKilledTheRunFailsAndLeavesNothing() throws Exception {
        Path job = job("hostless", "sleeper.py", Map.of());
        Running run = submitRunning(job);
        String runId = run.runId();
        List<Long> workers = run.workers();
        String h2 = jobs.bed.host(2).address();
        List<ProcessHandle> hosts = processesWith("host", runId);
        assertThat(hosts).as("one node host per node").hasSize(2);
        // h2's host: the one in h2's network namespace
        ProcessHandle onH2 = hosts.stream().filter(p -> inNamespace(p.pid(), jobs.bed.host(2).namespace())).findFirst().orElseThrow();
        onH2.destroyForcibly();
        Pids.awaitGone(workers, Duration.ofSeconds(40), "the workers of a run whose node host on " + h2 + " was killed");
        Poll.until(() -> processesOf(runId).isEmpty(), Duration.ofSeconds(40), "the run's coordinator, other host and agents to end");
        Result status = runjob(dir, Duration.ofSeconds(60), "status", runId);
        assertThat(status.out()).contains("run " + runId + " of job hostless: failed (exit 1)");
    }

    /** True when {@code pid} runs in the network namespace named {@code ns} ({@code ip netns}). */
    private static boolean inNamespace(long pid, String ns) {
        try {
            return Files.isSameFile(Path.of("/run/netns", ns), Path.of("/proc", Long.toString(pid), "ns", "net"));
        } catch (IOException e) {
            return false;
        }
    }
}
