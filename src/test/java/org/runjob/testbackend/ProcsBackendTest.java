package org.runjob.testbackend;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.backends.Backends;
import org.runjob.cli.Cli;
import org.runjob.json.Json;
import org.runjob.testbed.HomeEnv;
import org.runjob.testbed.Poll;

import tools.jackson.databind.JsonNode;

/**
 * A backend that lives only in the test sources ({@link ProcsBackend}, one line in the tests'
 * {@code META-INF/services}) goes through every stage: its block is validated by its own schema,
 * its rules run, its node addresses reach the plan, its commands the dry run, and a run of two
 * nodes starts an agent per node and every rank.
 */
class ProcsBackendTest {

    @TempDir
    Path tmp;

    private Path job(String backendLines, String nodes) throws Exception {
        return Files.writeString(tmp.resolve("procs.yaml"), "name: procs\n" + backendLines + "nodes:\n" + nodes
                + "workdir: " + tmp.resolve("work") + "\nlogs: {dir: " + tmp.resolve("runs") + "}\n"
                + "entrypoint: {command: [sh, -c, 'echo rank $RANK of $WORLD_SIZE node $NODE_RANK local $LOCAL_RANK']}\n");
    }

    private static final String TWO = "  - {name: a, workers: 2}\n  - {name: b, workers: 1}\n";

    private Map<String, String> env() throws Exception {
        return HomeEnv.in(tmp);
    }

    @Test
    void theRegistryFindsItByItsServiceLine() {
        assertThat(Backends.all()).extracting(b -> b.name()).containsExactlyInAnyOrder("ssh", "slurm", "procs");
        assertThat(Backends.specs().named("procs")).isPresent();
    }

    @Test
    void itsBlockAndItsRulesAreChecked() throws Exception {
        Path bad = job("backend: procs\nprocs: {label: 7, colour: red}\n", "  - {name: a, host: h1, workers: 1}\n");
        var r = Cli.run(env(), "validate", bad.toString());
        assertThat(r.code()).isEqualTo(2);
        String f = bad.toString();
        assertThat(r.err().lines().toList()).containsExactly(
                f + ":3:16: /procs/label: integer found, string expected",
                f + ":3:19: /procs/colour: unknown key 'colour'; allowed here: label",
                f + ":5:15: /nodes/0/host: node 'a' is a process of backend: procs: it has no host and is not local",
                f + ": 3 problems");
    }

    @Test
    void itPlansDryRunsAndRunsThroughEveryStage() throws Exception {
        Path ok = job("backend: procs\nprocs: {label: demo}\n", TWO);
        assertThat(Cli.run(env(), "validate", ok.toString()).code()).isZero();

        var plan = Cli.run(env(), "--dry-run", "--output", "json", ok.toString());
        assertThat(plan.code()).as(plan.err()).isZero();
        JsonNode json = Json.read(plan.out());
        assertThat(json.get("nodes")).hasSize(2);
        JsonNode a = json.get("nodes").get(0);
        assertThat(a.get("procs_node").stringValue()).isEqualTo("a");
        assertThat(a.get("host").stringValue()).isEqualTo("127.0.0.1");
        assertThat(a.get("local").booleanValue()).isFalse();
        assertThat(json.get("nodes").get(1).get("ranks").toString()).isEqualTo("[2]");

        var text = Cli.run(env(), "--dry-run", ok.toString());
        assertThat(text.code()).as(text.err()).isZero();
        assertThat(text.out()).contains("agent for a\n").contains("agent for b\n").contains("process a")
                .contains("  note: procs demo: every node is a process on this machine\n");

        var run = Cli.run(env(), ok.toString());
        assertThat(run.code()).as(run.err()).isZero();
        assertThat(run.err()).contains("runjob: note: procs demo: every node is a process on this machine\n");
        assertThat(run.out().lines().sorted().toList()).containsExactly(
                "[a/0] rank 0 of 3 node 0 local 0", "[a/1] rank 1 of 3 node 0 local 1", "[b/2] rank 2 of 3 node 1 local 0");
        assertThat(tmp.resolve("work")).isDirectory();
    }

    /**
     * Its queue ({@link ProcsQueue}) takes a submitted run: submit queues it and names the job, the
     * run's records ask the queue where it stands, and stop cancels it through the queue; nothing
     * of submit, the records or stop names the backend.
     */
    @Test
    void aRunIsSubmittedToItsQueueReadBackAndStoppedThroughIt() throws Exception {
        Path ok = Files.writeString(tmp.resolve("queued.yaml"), Files.readString(job("backend: procs\nprocs: {label: q}\n", TWO))
                .replace("name: procs", "name: queued"));
        Map<String, String> env = env();
        var done = Cli.run(env, "submit", ok.toString());
        assertThat(done.code()).as(done.err()).isZero();
        String runId = done.out().strip();
        assertThat(done.err()).containsPattern("runjob: run " + runId + " is queued as procs job \\d+; its folder is .*, the batch job's own output "
                + ".*/procs-queue.out; this machine may now go");
        Path folder = tmp.resolve("runs").resolve("queued").resolve(runId);
        assertThat(Files.readString(folder.resolve("submit.sh"))).startsWith("#!/bin/sh\n# runjob's batch step").endsWith("exec \"$@\"\n");
        Poll.until(() -> Cli.run(env, "status", runId).out().contains("succeeded (exit 0)"), Duration.ofSeconds(60), "the queued run to succeed");
        assertThat(Files.readAllLines(folder.resolve("all.log")).stream().filter(l -> l.contains(" rank ")).sorted().toList()).containsExactly(
                "[a/0] rank 0 of 3 node 0 local 0", "[a/1] rank 1 of 3 node 0 local 1", "[b/2] rank 2 of 3 node 1 local 0");

        Path slow = Files.writeString(tmp.resolve("slow.yaml"), Files.readString(ok).replace("name: queued", "name: slow")
                .replace("echo rank", "sleep 120; echo rank"));
        var queued = Cli.run(env, "submit", slow.toString());
        assertThat(queued.code()).as(queued.err()).isZero();
        String slowId = queued.out().strip();
        Path slowFolder = tmp.resolve("runs").resolve("slow").resolve(slowId);
        // its workers started: its coordinator took the stop as Ctrl-C from then on (a SIGTERM before its start would end the JVM)
        Poll.until(() -> Files.exists(slowFolder.resolve("rank-2.log")) && Cli.run(env, "status", slowId).out().contains("running"),
                Duration.ofSeconds(60), "the slow run's workers to run");
        var stop = Cli.run(env, "stop", slowId);
        assertThat(stop.code()).as(stop.err()).isZero();
        Poll.until(() -> Cli.run(env, "status", slowId).out().contains("interrupted (exit 130)"), Duration.ofSeconds(60),
                "the stopped run to end interrupted", () -> Cli.run(env, "status", slowId).out() + stop.err() + stop.out());
    }

    /**
     * {@code submit --resume} checks each environment on this machine again, as a submit does: a
     * sourced script gone since the first submit refuses the resume (exit 3) and queues nothing;
     * once it is back the run is queued again.
     */
    @Test
    void aResumeChecksTheEnvironmentsAgainAndQueuesNothingWhenOneFailsNow() throws Exception {
        Path script = Files.writeString(tmp.resolve("env.sh"), "export FROM_SCRIPT=yes\n");
        Path ok = Files.writeString(tmp.resolve("again.yaml"), Files.readString(job("backend: procs\nprocs: {label: q}\n", TWO))
                .replace("name: procs", "name: again") + "environment: {source: [" + script + "]}\n");
        Map<String, String> env = env();
        var done = Cli.run(env, "submit", ok.toString());
        assertThat(done.code()).as(done.err()).isZero();
        String runId = done.out().strip();
        Poll.until(() -> Cli.run(env, "status", runId).out().contains("succeeded (exit 0)"), Duration.ofSeconds(60), "the queued run to succeed");
        Path queuedJson = tmp.resolve("runs").resolve("again").resolve(runId).resolve("queued.json");
        String before = Files.readString(queuedJson);

        Files.delete(script);
        var refused = Cli.run(env, "submit", "--resume", runId);
        assertThat(refused.code()).as(refused.err()).isEqualTo(3);
        assertThat(refused.err()).startsWith("runjob: checked on this machine before queueing, nodes a, b fail: ")
                .contains(script.toString()).contains("runjob: nothing is queued;");
        assertThat(Files.readString(queuedJson)).isEqualTo(before);

        Files.writeString(script, "export FROM_SCRIPT=yes\n");
        var resumed = Cli.run(env, "submit", "--resume", runId);
        assertThat(resumed.code()).as(resumed.err()).isZero();
        assertThat(resumed.out()).isEqualTo(runId + "\n");
        // attempt 1 set attempt 0's summary aside when it started: its own ends the run
        Path setAside = queuedJson.resolveSibling("summary.until-attempt-0.json");
        Poll.until(() -> Files.exists(setAside) && Cli.run(env, "status", runId).out().contains("succeeded (exit 0)"), Duration.ofSeconds(60),
                "the resumed run to succeed");
        assertThat(Files.readString(queuedJson)).contains("\"earlier_job_ids\":[");
    }

    /**
     * {@code submit --wait} (as {@code sbatch --wait}): the run id, then the run's output as
     * {@code logs -f} prints it, and the run's own exit code; {@code --dry-run} with it is refused.
     */
    @Test
    void submitWaitFollowsTheQueuedRunAndExitsWithItsExitCode() throws Exception {
        String two = Files.readString(job("backend: procs\nprocs: {label: q}\n", TWO));
        Path ok = Files.writeString(tmp.resolve("waited.yaml"), two.replace("name: procs", "name: waited"));
        Map<String, String> env = env();
        var done = Cli.run(env, "submit", "--wait", ok.toString());
        assertThat(done.code()).as(done.err()).isZero();
        List<String> lines = done.out().lines().toList();
        assertThat(lines.get(0)).matches("\\d{8}-\\d{6}-[0-9a-f]{4}");
        assertThat(lines.stream().filter(l -> l.contains(" rank ")).sorted().toList()).containsExactly(
                "[a/0] rank 0 of 3 node 0 local 0", "[a/1] rank 1 of 3 node 0 local 1", "[b/2] rank 2 of 3 node 1 local 0");
        assertThat(Cli.run(env, "status", lines.get(0)).out()).contains("succeeded (exit 0)");

        Path bad = Files.writeString(tmp.resolve("failing.yaml"), two.replace("name: procs", "name: failing")
                .replace("'echo rank", "'[ $RANK = 1 ] && exit 3; echo rank"));
        var failed = Cli.run(env, "submit", "-W", bad.toString());
        assertThat(failed.code()).as(failed.out() + failed.err()).isEqualTo(1);
        String failedId = failed.out().lines().findFirst().orElseThrow();
        assertThat(Cli.run(env, "status", failedId).out()).contains("failed (exit 1)");

        // a sweep's runs one after another: each run's id, then its output; the highest exit code (point 1's rank 1 exits 3)
        Path swept = Files.writeString(tmp.resolve("sweptwait.yaml"), two.replace("name: procs", "name: sweptwait")
                .replace("'echo rank", "'[ $RANK$POINT = 11 ] && exit 3; echo rank") + "env: {POINT: '${sweep.p}'}\nsweep: {p: [0, 1]}\n");
        var sweep = Cli.run(env, "submit", "--wait", swept.toString());
        assertThat(sweep.code()).as(sweep.out() + sweep.err()).isEqualTo(1);
        List<String> ids = sweep.out().lines().filter(l -> l.matches("\\d{8}-\\d{6}-[0-9a-f]{4}")).toList();
        assertThat(ids).hasSize(2);
        assertThat(Cli.run(env, "status", ids.get(0)).out()).contains("succeeded (exit 0)");
        assertThat(Cli.run(env, "status", ids.get(1)).out()).contains("failed (exit 1)");

        var dry = Cli.run(env, "submit", "--wait", "--dry-run", ok.toString());
        assertThat(dry.code()).isEqualTo(2);
        assertThat(dry.err()).isEqualTo("runjob: --wait follows a queued run, and --dry-run queues none\n");
    }

    @Test
    void aSweepItsQueueCannotHoldBackIsRefusedMaxParallelAndQueuesNothing() throws Exception {
        Path swept = Files.writeString(tmp.resolve("swept.yaml"), Files.readString(job("backend: procs\nprocs: {label: q}\n", TWO))
                .replace("name: procs", "name: swept") + "sweep: {n: [1, 2]}\n");
        var refused = Cli.run(env(), "submit", "--max-parallel", "1", swept.toString());
        assertThat(refused.code()).isEqualTo(2);
        assertThat(refused.err()).isEqualTo("runjob: --max-parallel needs the sweep queued as one job array, and procs runs no job array of"
                + " this job's allocation: each point would be a job of its own, which procs runs as it has room\n");
        assertThat(tmp.resolve("runs").resolve("swept")).doesNotExist();
    }
}
