package org.runjob.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.run.ExitCode;
import org.runjob.spec.JobSpec.FailureSpec;
import org.runjob.testbed.FakeCuda;
import org.runjob.testbed.Leftovers;
import org.runjob.testbed.Pids;
import org.runjob.testbed.Poll;
import org.runjob.testbed.RunjobProcess;
import org.runjob.testbed.Testbed;

/**
 * {@code gpus: {count: N}} and GPU leases on one machine, with GPUs described to the stand-in
 * driver: free GPUs are picked least used first, runs started together get disjoint GPUs, a
 * lease dies with its agent, and a listed GPU another run holds is a warning (an error when strict).
 */
class GpuLeaseTest {

    /** 4 GPUs of 16 GiB with 0, 9000, 100 and 0 MiB in use. */
    static final String FOUR = "Tesla V100-PCIE-16GB|16384|0|7.0|0000:01:00;Tesla V100-PCIE-16GB|16384|9000|7.0|0000:02:00;"
            + "Tesla V100-PCIE-16GB|16384|100|7.0|0000:03:00;Tesla V100-PCIE-16GB|16384|0|7.0|0000:04:00";
    static final String IDLE = FOUR.replace("|9000|", "|0|").replace("|100|", "|0|");

    @TempDir
    Path tmp;

    @RegisterExtension
    final Leftovers toClean = new Leftovers();

    Map<String, String> env(String gpus) throws Exception {
        Map<String, String> env = FakeCuda.env(gpus);
        env.put("RUNJOB_GPU_LEASES", tmp.resolve("leases").toString());
        env.put("MARKS", Files.createDirectories(tmp.resolve("marks")).toString());
        return env;
    }

    /** A local node with {@code gpus}; each worker writes its CUDA_VISIBLE_DEVICES to MARKS/RUN-RANK and prints it, then sleeps when HOLD. */
    Path job(String name, String gpus, String extra) throws Exception {
        return Files.writeString(tmp.resolve(name + ".yaml"), "name: " + name + "\nnodes:\n  - {name: box, local: true, gpus: " + gpus + "}\n"
                + "entrypoint: {command: [sh, -c, 'echo cvd $CUDA_VISIBLE_DEVICES; echo $CUDA_VISIBLE_DEVICES > $MARKS/$RUNJOB_RUN_ID-$RANK;"
                + " [ -z \"$HOLD\" ] || exec sleep 600']}\nlogs: {dir: " + tmp.resolve("runs") + "}\nworkdir: " + tmp.resolve("work-" + name) + "\n"
                // port auto: runs started together on this machine would otherwise both bind 29500 in preflight
                + "failure: {grace_period_s: 1}\nrendezvous: {port: auto}\n" + extra);
    }

    @Test
    void freeGpusArePickedLeastUsedFirstAndAShortageNamesEachGpu() throws Exception {
        Cli two = Cli.run(env(FOUR), job("two", "{count: 2}", "").toString());
        assertThat(two.code()).as(two.err()).isZero();
        assertThat(two.out().lines().sorted().toList()).containsExactly("[box/0] cvd 0,3", "[box/1] cvd 0,3");
        Cli three = Cli.run(env(FOUR), job("three", "{count: 3}", "").toString());
        assertThat(three.code()).as(three.err()).isZero();
        assertThat(three.out().lines().sorted().toList()).containsExactly("[box/0] cvd 0,2,3", "[box/1] cvd 0,2,3", "[box/2] cvd 0,2,3");
        Path run = Files.list(tmp.resolve("runs/three")).findFirst().orElseThrow();
        assertThat(Files.readString(run.resolve("preflight.json"))).contains("picked GPUs 0, 3, 2 of 4 Tesla V100-PCIE-16GB");
        assertThat(Files.readString(run.resolve("summary.json"))).contains("\"pci_bus_id\" : \"00000000:01:00.0\"")
                .contains("\"pci_bus_id\" : \"00000000:03:00.0\"").contains("\"pci_bus_id\" : \"00000000:04:00.0\"")
                .doesNotContain("00000000:02:00.0");
        Cli four = Cli.run(env(FOUR), job("four", "{count: 4}", "").toString());
        assertThat(four.code()).as(four.err()).isEqualTo(3);
        assertThat(four.err()).contains("FAIL box gpus: needs 4 free GPUs, 3 of 4 are; GPU 1: 9000 MiB in use\n");
        Cli strict = Cli.run(env(FOUR), job("tight", "{count: 3, max_used_mib: 100}", "").toString());
        assertThat(strict.err()).contains("needs 3 free GPUs, 2 of 4 are; GPU 1: 9000 MiB in use; GPU 2: 100 MiB in use");
        // more GPUs than the node has: no wait helps, so none is made
        Cli five = Cli.run(env(FOUR), "--wait-for-gpus", "1h", job("five", "{count: 5}", "").toString());
        assertThat(five.code()).isEqualTo(3);
        assertThat(five.err()).contains("FAIL box gpus: needs 5 free GPUs, 3 of 4 are; GPU 1: 9000 MiB in use; the node has 4 GPUs\n");
        Cli dry = Cli.run(env(FOUR), "--dry-run", job("dry", "{count: 2}", "").toString());
        assertThat(dry.out()).contains("  CUDA_VISIBLE_DEVICES  <2 free GPUs picked at launch>\n").contains("(2 workers)");
    }

    @Test
    void runsStartedTogetherGetDisjointGpusAndAThirdWaitsForThem() throws Exception {
        Map<String, String> env = env(IDLE);
        env.put("HOLD", "1");
        Path a = job("a", "{count: 2}", "");
        Path b = job("b", "{count: 2}", "");
        Process first = start(a, env);
        Process second = start(b, env);
        try {
            Poll.until(() -> marks().size() == 4, Duration.ofSeconds(60), "both runs' workers up");
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\n--- a:\n" + stderr("a") + "\n--- b:\n" + stderr("b"), e);
        }
        Map<String, String> cvd = marks();
        Set<String> sets = new TreeSet<>(cvd.values());
        assertThat(sets).hasSize(2);
        assertThat(String.join(",", sets).split(",")).containsExactlyInAnyOrder("0", "1", "2", "3");

        Cli gpus = Cli.run(env, "gpus", a.toString());
        assertThat(gpus.out().lines().filter(l -> l.startsWith("box ")).toList()).hasSize(4)
                .allMatch(l -> l.matches(".* run \\S+ of job [ab] \\(user root, since \\S+Z\\)$"));

        Cli third = Cli.run(env(IDLE), job("c", "{count: 2}", "").toString());
        assertThat(third.code()).as(third.err()).isEqualTo(3);
        assertThat(third.err()).containsPattern("needs 2 free GPUs, 0 of 4 are; GPU 0: held by run \\S+ of job [ab] \\(user root, since ");

        Process waiting = start(job("d", "{count: 2}", ""), env, "--wait-for-gpus", "60s");
        Poll.until(() -> stderr("d").contains("waiting for free GPUs"), Duration.ofSeconds(30), "the third run to wait");
        String aGpus = cvd.get(runId("a") + "-0");
        first.destroy();
        assertThat(first.waitFor(30, TimeUnit.SECONDS)).isTrue();
        Poll.until(() -> marks().size() == 6, Duration.ofSeconds(30), "the waiting run to start on the freed GPUs");
        assertThat(marks()).containsEntry(runId("d") + "-0", aGpus).containsEntry(runId("d") + "-1", aGpus);
        assertThat(stderr("d")).contains("waiting for free GPUs (0 s of 60 s): needs 2 free GPUs, 0 of 4 are; GPU 0: held by run ");
        waiting.destroy();
        second.destroy();
    }

    @Test
    void aLeaseDiesWithItsAgentAndAListedGpuHeldByAnotherRunIsAWarningOrAnError() throws Exception {
        Process holder = holding("holder", "{count: 2}", 2, FailureSpec.DEFAULT_HEARTBEAT_S);
        assertThat(marks().values()).containsOnly("0,1");

        Cli listed = Cli.run(env(IDLE), job("listed", "[0, 2]", "").toString());
        assertThat(listed.code()).as(listed.err()).isZero();
        assertThat(listed.err()).containsPattern("warn box gpus: 2 of 4 Tesla V100-PCIE-16GB: GPU 0 is held by run \\S+ of job holder");
        Cli strict = Cli.run(env(IDLE), job("strict", "[0, 2]", "gpu_leases: strict\n").toString());
        assertThat(strict.code()).as(strict.err()).isEqualTo(3);
        assertThat(strict.err()).containsPattern("FAIL box gpus: 2 of 4 Tesla V100-PCIE-16GB: GPU 0 is held by run \\S+ of job holder.*"
                + " \\(gpu_leases: strict\\)");

        long agent = agentOf(holder);
        ProcessHandle.of(agent).orElseThrow().destroyForcibly();
        Poll.until(() -> Pids.living(List.of(agent)).isEmpty(), Duration.ofSeconds(10), "the holder's agent to die");
        Cli next = Cli.run(env(IDLE), job("next", "{count: 4}", "").toString());
        assertThat(next.code()).as("the dead agent's leases are free at once: " + next.err()).isZero();
    }

    @Test
    void anotherUsersLockIsNamedFromTheLockAndALeaseThatCannotBeTakenIsNamed() throws Exception {
        Testbed.require(Testbed.runs("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "true"), "root, to act as user nobody");
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x")); // nobody reaches the lease directory in it
        Cli first = Cli.run(env(IDLE), job("first", "{count: 1}", "").toString());
        assertThat(first.code()).as(first.err()).isZero();
        Path lease;
        try (var files = Files.list(tmp.resolve("leases"))) {
            lease = files.toList().get(0); // GPU 0's: the one lease taken so far
        }
        // user nobody locks GPU 0's lease file and writes a claim of root's into it
        Process nobody = new ProcessBuilder("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c",
                "import fcntl, sys, time\nf = open(sys.argv[1], 'r+')\nfcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
                        + "f.truncate(0); f.write('run fake of job trusted (user root, since 2020-01-01T00:00:00Z)'); f.flush()\n"
                        + "print('locked', flush=True); time.sleep(600)", lease.toString()).redirectErrorStream(true).start();
        toClean.add(nobody);
        String said = new String(nobody.getInputStream().readNBytes(7), StandardCharsets.UTF_8);
        assertThat(said).as("user nobody's python said").isEqualTo("locked\n");
        String holder = "process " + nobody.pid() + " \\(python3[.0-9]*\\) of user nobody, since \\S+Z";
        Cli gpus = Cli.run(env(IDLE), "gpus", tmp.resolve("first.yaml").toString());
        assertThat(gpus.code()).as(gpus.err()).isZero();
        assertThat(gpus.out()).containsPattern("\nbox +0 .*" + holder + "\n").doesNotContain("trusted");
        Cli listed = Cli.run(env(IDLE), job("listed", "[0]", "").toString());
        assertThat(listed.code()).as(listed.err()).isZero();
        assertThat(listed.err()).containsPattern("warn box gpus: 1 of 4 Tesla V100-PCIE-16GB: GPU 0 is held by " + holder);

        // a lease that cannot be taken (here its file is a directory) is named by gpus (exit 3), warned of by a
        // run of listed GPUs, and fails one with gpu_leases: strict
        Files.createDirectory(lease.resolveSibling(lease.getFileName().toString().replace("-01-", "-02-")));
        String why = "lease of GPU 1 (";
        Cli refused = Cli.run(env(IDLE), "gpus", tmp.resolve("first.yaml").toString());
        assertThat(refused.code()).isEqualTo(ExitCode.PREFLIGHT_FAILED);
        assertThat(refused.err()).contains("runjob: box: GPU leases cannot be taken, so runs that use its GPUs would fail or run unleased: ")
                .contains(why);
        Cli unleased = Cli.run(env(IDLE), job("unleased", "[1]", "").toString());
        assertThat(unleased.code()).as(unleased.err()).isZero();
        assertThat(unleased.err()).contains("warn box gpus: 1 of 4 Tesla V100-PCIE-16GB: GPU leases not taken: ").contains(why);
        Cli strict = Cli.run(env(IDLE), job("strictly", "[1]", "gpu_leases: strict\n").toString());
        assertThat(strict.code()).as(strict.err()).isEqualTo(ExitCode.PREFLIGHT_FAILED);
        assertThat(strict.err()).contains("FAIL box gpus: 1 of 4 Tesla V100-PCIE-16GB: GPU leases not taken: ").contains("(gpu_leases: strict)");
    }

    @Test
    void aRunWhoseRunjobIsSuspendedGivesItsGpusBackOnceItsWorkersAreStopped() throws Exception {
        Process asleep = holding("asleep", "{count: 4}", 4, 5);
        Map<String, String> checkEnv = env(IDLE);
        assertThat(Cli.run(checkEnv, "check", job("next", "{count: 1}", "").toString()).code()).isEqualTo(3);
        // a laptop that suspends: runjob stops; after the job's heartbeat timeout (5 s) its agent stops the workers
        new ProcessBuilder("kill", "-STOP", Long.toString(asleep.pid())).start().waitFor();
        try {
            Poll.until(() -> Cli.run(checkEnv, "check", tmp.resolve("next.yaml").toString()).code() == 0, Duration.ofSeconds(40),
                    "the sleeping run's GPUs free for the next one");
        } finally {
            new ProcessBuilder("kill", "-CONT", Long.toString(asleep.pid())).start().waitFor();
        }
    }

    /** The pid of the agent of local runjob {@code p}: its child JVM that runs {@code agent}. */
    private static long agentOf(Process p) {
        // the JVM itself: its watchdog's (and bootstrap's) command lines hold the same words
        return p.descendants().filter(h -> h.info().command().orElse("").endsWith("/java")
                        && h.info().commandLine().orElse("").contains("org.runjob.agent.AgentMain agent")).findFirst()
                .orElseThrow(() -> new AssertionError("no agent among " + p.descendants().map(h -> h.info().commandLine().orElse("?")).toList()))
                .pid();
    }

    /**
     * Starts run {@code name} on {@code gpus} with workers that hold them (HOLD) and a heartbeat timeout of
     * {@code heartbeatS}; returns once its {@code workers} marked theirs.
     */
    private Process holding(String name, String gpus, int workers, int heartbeatS) throws Exception {
        Map<String, String> env = env(IDLE);
        env.put("HOLD", "1");
        Path job = job(name, gpus, "");
        Files.writeString(job, Files.readString(job).replace("failure: {grace_period_s: 1}",
                "failure: {grace_period_s: 1, heartbeat_timeout_s: " + heartbeatS + "}"));
        Process p = start(job, env);
        Poll.until(() -> marks().size() == workers, Duration.ofSeconds(60), "run " + name + "'s workers up");
        return p;
    }

    private Process start(Path job, Map<String, String> env, String... options) throws Exception {
        Process p = RunjobProcess.start(tmp, job, env, options);
        toClean.add(p);
        return p;
    }

    private String stderr(String name) {
        try {
            return RunjobProcess.stderrOf(tmp, tmp.resolve(name + ".yaml"));
        } catch (IOException e) {
            return "";
        }
    }

    /** RUN-RANK to that worker's CUDA_VISIBLE_DEVICES. */
    private Map<String, String> marks() {
        Map<String, String> out = new TreeMap<>();
        try (var files = Files.list(tmp.resolve("marks"))) {
            for (Path f : files.toList()) {
                String v = Files.readString(f).strip();
                if (!v.isEmpty()) {
                    out.put(f.getFileName().toString(), v);
                }
            }
        } catch (IOException e) {
            // none yet
        }
        return out;
    }

    /** The id of the (one) run of job {@code job}. */
    private String runId(String job) throws IOException {
        try (var runs = Files.list(tmp.resolve("runs").resolve(job))) {
            return runs.findFirst().orElseThrow().getFileName().toString();
        }
    }
}
