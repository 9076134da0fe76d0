package org.runjob.launch;

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
import org.runjob.testbed.Pids;
import org.runjob.testbed.Poll;

/**
 * Nothing the job started outlives the agent, on local nodes: a daemon that clears its environment
 * and leaves its session is still stopped, and a SIGKILLed agent's workers are stopped by its
 * watchdog within the grace period plus 3 s, even when runjob ends the node first; a SIGKILLed
 * watchdog leaves the run undisturbed.
 */
class DeadAgentTest {

    @TempDir
    Path tmp;

    LocalJobs jobs;
    @RegisterExtension
    final Leftovers toClean = new Leftovers();

    @BeforeEach
    void setUp() throws Exception {
        jobs = new LocalJobs(tmp);
    }


    @Test
    void aDaemonWithAClearedEnvironmentIsStoppedWhenTheJobEnds() throws Exception {
        Path job = jobs.job("daemon", "daemon.py", 1, 2, Map.of("THEN", "exit"), 1, 0);
        Cli r = jobs.runInProcess(job);
        List<Long> daemon = jobs.awaitPids("daemon", 1, Duration.ofSeconds(1));
        toClean.addAll(daemon);
        assertThat(r.code()).as(r.err()).isEqualTo(0);
        assertThat(Pids.living(daemon)).isEmpty();
    }

    /** A run of jobs/agentkill: its runjob, the ranks 0-3 and rank 0's daemon (pids 0-4), and node n1's agent. */
    private record DaemonRun(Path job, Process runjob, List<Long> pids, long agent) {
    }

    /** Two nodes of two ranks that ignore SIGTERM; rank 0's daemon is adopted and recorded by n1's agent for its watchdog. */
    private DaemonRun startWithRecordedDaemon() throws Exception {
        Path job = jobs.job("agentkill", "daemon.py", 2, 2, Map.of("IGNORE_TERM", "1"), 1, 0);
        Process runjob = jobs.start(job);
        List<Long> pids = new ArrayList<>(jobs.awaitPids("rank", 4, Duration.ofSeconds(30)));
        pids.addAll(jobs.awaitPids("daemon", 1, Duration.ofSeconds(5)));
        toClean.addAll(pids);
        long agent = Pids.parentOf(pids.get(0));
        // the agent records its tree every 100 ms for its watchdog; a daemon younger than that could escape
        Path registry = Pids.registryOf(agent);
        Poll.until(() -> Pids.recorded(registry).contains(pids.get(4)), Duration.ofSeconds(5), "the daemon to be recorded");
        return new DaemonRun(job, runjob, pids, agent);
    }

    @Test
    void sigkillOfALocalAgentLeavesNothingWithinGracePlusThreeSeconds() throws Exception {
        DaemonRun run = startWithRecordedDaemon();
        Path job = run.job();
        Process runjob = run.runjob();
        List<Long> pids = run.pids();
        long agent = run.agent();
        assertThat(Pids.parentOf(pids.get(1))).isEqualTo(agent);
        assertThat(Pids.parentOf(pids.get(4))).as("the daemon is adopted by its agent").isEqualTo(agent);
        long otherAgent = Pids.parentOf(pids.get(2));

        ProcessHandle.of(agent).orElseThrow().destroyForcibly();
        // the watchdog: TERM (ignored by the workers), KILL after the 1 s grace; the daemon goes too
        try {
            // grace + 3 s: the watchdog kills at grace + 0.1 s; the rest is slack for a loaded 2-core machine. This
            // timed out now and then, the daemon left, until the watchdog stopped dying with runjob (next test)
            Poll.until(() -> Pids.living(List.of(pids.get(0), pids.get(1), pids.get(4))).isEmpty(), Duration.ofSeconds(1 + 3),
                    "node n1's workers and daemon to be gone");
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; left: " + Pids.describe(List.of(pids.get(0), pids.get(1), pids.get(4))), e);
        }
        // runjob sees node n1 lost and stops the other node as for any failure
        assertThat(runjob.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(runjob.exitValue()).isEqualTo(1);
        assertThat(Pids.living(pids)).isEmpty();
        assertThat(ProcessHandle.of(otherAgent).map(ProcessHandle::isAlive).orElse(false)).isFalse();
        assertThat(jobs.stderrOf(job)).contains("root cause: rank 0 (local rank 0) on node n1: lost:");
    }

    /**
     * runjob ends a lost local node's program as a dropped SSH channel would: it kills what is
     * under the watchdog and leaves the watchdog to sweep. Here the watchdog is frozen until runjob
     * has exited, so whatever runjob sent it is pending when it wakes: it must still stop the
     * daemon the dead agent left to init (runjob cannot find that one: no token, no group).
     */
    @Test
    void runjobEndingALostLocalNodeLeavesItsWatchdogToSweep() throws Exception {
        DaemonRun run = startWithRecordedDaemon();
        Process runjob = run.runjob();
        List<Long> pids = run.pids();
        long agent = run.agent();
        long watchdog = Pids.parentOf(agent);
        toClean.add(watchdog);

        LocalJobs.signal(watchdog, "STOP");
        try {
            ProcessHandle.of(agent).orElseThrow().destroyForcibly();
            assertThat(runjob.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(runjob.exitValue()).isEqualTo(1);
            // the watchdog outlives runjob's end, to sweep what its agent recorded. (Whether the daemon is still
            // there for it depends on a race: the kernel closes the dead agent's pipes, which runjob sees, before it
            // moves the agent's children away, so runjob's end may catch the daemon while it is still under the agent.)
            assertThat(Pids.living(List.of(watchdog))).as("the watchdog outlives runjob").hasSize(1);
        } finally {
            LocalJobs.signal(watchdog, "CONT");
        }
        Pids.awaitGone(pids, Duration.ofSeconds(1 + 3), "n1's workers and daemon, swept by the thawed watchdog");
        Pids.awaitGone(List.of(watchdog), Duration.ofSeconds(5), "the watchdog");
    }

    @Test
    void aStoppedAgentIsLostAfterTheHeartbeatTimeoutAndLeavesNothing() throws Exception {
        Path job = LocalJobs.heartbeat(jobs.job("agentstop", "sleeper.py", 2, 1, Map.of(), 1, 0), 5);
        Process runjob = jobs.start(job);
        List<Long> pids = jobs.awaitPids("rank", 2, Duration.ofSeconds(30));
        toClean.addAll(pids);
        long agent = Pids.parentOf(pids.get(0));
        toClean.add(agent);
        assertThat(new ProcessBuilder("kill", "-STOP", Long.toString(agent)).start().waitFor()).isZero();
        // no PONG for the heartbeat timeout: node n1 is lost, the run fails and n2 is stopped as for any failure
        assertThat(runjob.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(runjob.exitValue()).isEqualTo(1);
        assertThat(jobs.stderrOf(job)).contains("root cause: rank 0 (local rank 0) on node n1: lost: its agent answered no heartbeat"
                + " for 5 s (stopped, hung, or its link is gone)");
        Pids.awaitGone(pids, Duration.ofSeconds(5), "both ranks");
        Pids.awaitGone(List.of(agent), Duration.ofSeconds(5), "the stopped agent");
    }

    @Test
    void sigkillOfTheWatchdogDoesNotDisturbTheRunAndLeavesNothingAtItsEnd() throws Exception {
        Path job = jobs.job("watchdogkill", "sleeper.py", 1, 2, Map.of(), 1, 0);
        Process runjob = jobs.start(job);
        List<Long> pids = jobs.awaitPids("rank", 2, Duration.ofSeconds(30));
        toClean.addAll(pids);
        long agent = Pids.parentOf(pids.get(0));
        long watchdog = Pids.parentOf(agent);
        ProcessHandle.of(watchdog).orElseThrow().destroyForcibly();
        Pids.awaitGone(List.of(watchdog), Duration.ofSeconds(5), "the watchdog");
        assertThat(Pids.living(pids)).as("the run goes on").hasSize(2);
        assertThat(ProcessHandle.of(agent).map(ProcessHandle::isAlive)).contains(true);
        LocalJobs.signal(runjob, "INT");
        assertThat(runjob.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(runjob.exitValue()).isEqualTo(130);
        Pids.awaitGone(pids, Duration.ofSeconds(5), "the workers after Ctrl-C");
        Pids.awaitGone(List.of(agent), Duration.ofSeconds(5), "the agent");
    }

    @Test
    void aPausedRunjobGetsItsWorkersLastOutputAndTheReasonWhenItWakes() throws Exception {
        Path job = LocalJobs.heartbeat(jobs.job("paused", "term_reporter.py", 1, 2, Map.of(), 2, 0), 5);
        Process runjob = jobs.start(job);
        List<Long> pids = jobs.awaitPids("rank", 2, Duration.ofSeconds(30));
        toClean.addAll(pids);
        LocalJobs.signal(runjob, "STOP");
        try {
            // the agent misses runjob's heartbeats for 5 s (the job's heartbeat_timeout_s) and stops the workers,
            // which print their last line
            Pids.awaitGone(pids, Duration.ofSeconds(5 + 10), "the workers, stopped by their agent");
        } finally {
            LocalJobs.signal(runjob, "CONT");
        }
        assertThat(runjob.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(runjob.exitValue()).isEqualTo(1);
        String err = jobs.stderrOf(job);
        assertThat(err).contains("node n1: no heartbeat from runjob for 5 s: stopping every worker")
                .containsPattern("root cause: rank ([01]) \\(local rank \\1\\) on node n1: lost: stopped by its agent: no heartbeat from runjob for 5 s");
        for (int rank = 0; rank < 2; rank++) {
            assertThat(err).containsPattern("n1 +" + rank + " +" + rank + "  lost       lost: stopped by its agen");
        }
        Path folder = jobs.runFolder("paused");
        for (int rank = 0; rank < 2; rank++) {
            assertThat(Files.readString(folder.resolve("rank-" + rank + ".log"))).as("rank %d's log", rank)
                    .contains("rank " + rank + " tick 0\n").endsWith("rank " + rank + " got TERM\n");
        }
    }
}
