package org.runjob.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.cli.Cli;
import org.runjob.session.Interrupts;
import org.runjob.testbed.OnSlurmTestbed;
import org.runjob.testbed.Pids;
import org.runjob.testbed.Podman;
import org.runjob.testbed.Poll;
import org.runjob.testbed.RunjobJvm;
import org.runjob.testbed.RunjobProcess;
import org.runjob.testbed.SlurmTestbed;
import org.runjob.testbed.SshTestbed;
import org.runjob.testbed.Testbed;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code backend: slurm} against real Slurm daemons ({@link SlurmTestbed}: slurmctld, one slurmd per
 * network namespace, KillWait=5), with its hosts h1-h3 reachable over SSH too, so one job
 * file runs under both backends.
 */
@OnSlurmTestbed
class SlurmBackendTest {

    static final String PYTHON = "/usr/bin/python3";

    @TempDir
    Path dir;

    SlurmTestbed slurm;
    ClusterJobs jobs;
    /** runjob processes a test started: killed after it, so a failed test does not hold the cluster. */
    final List<Process> running = new ArrayList<>();
    Map<String, String> env;

    @AfterEach
    void release() throws Exception {
        running.forEach(Process::destroyForcibly);
        try {
            Poll.until(this::queueEmpty, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 10), "squeue empty after the test");
        } finally {
            // a test that failed half-way must not hold the cluster for the next ones
            cancel("--user=root");
        }
    }

    /** The pid of the srun that runs node {@code node}'s step, a child of runjob {@code p}. */
    private static long stepOf(Process p, String node) throws Exception {
        for (ProcessHandle h : p.descendants().toList()) {
            String cmdline = Files.readString(Path.of("/proc/" + h.pid() + "/cmdline")).replace('\0', ' ');
            if (cmdline.startsWith("srun ") && cmdline.contains(" --nodelist=" + node + " ")) {
                return h.pid();
            }
        }
        throw new AssertionError("no srun for " + node + " among runjob's children: " + p.descendants().map(h -> h.pid() + " "
                + h.info().commandLine().orElse("?")).toList());
    }

    @BeforeEach
    void cluster() throws Exception {
        String missing = SlurmTestbed.missing();
        Testbed.require(missing == null, missing == null ? "" : missing);
        slurm = SlurmTestbed.get();
        jobs = new ClusterJobs(dir, slurm.hosts());
        env = new HashMap<>(System.getenv());
        env.putAll(slurm.env());
        // beside the other testbed tests, which run the same run ids: a run index of this test's own
        env.put("XDG_STATE_HOME", dir.resolve("state").toString());
        assertThat(slurm.queue()).as("queue before the test").isEmpty();
    }

    /** Nodes h1 (2 workers) and h2 (1 worker), with SSH addresses too, in one shared workdir. */
    private Path job(String name, List<Path> files, List<String> command, String extra, Map<String, String> vars) throws Exception {
        SshTestbed bed = jobs.bed;
        String nodes = jobs.node(bed.host(1), 2).replace(", workdir: " + dir.resolve("work-h1"), "")
                + jobs.node(bed.host(2), 1).replace(", workdir: " + dir.resolve("work-h2"), "");
        return jobs.job(name, nodes, files, command, "backend: slurm\nworkdir: " + dir.resolve("work") + "\n" + extra, vars);
    }

    private Cli run(Path job, String... options) {
        String[] args = Arrays.copyOf(options, options.length + 1);
        args[options.length] = job.toString();
        return Cli.run(env, args);
    }

    @Test
    void unequalDdpRunsRankByRankAsOverSsh() throws Exception {
        Testbed.require(Testbed.runs(PYTHON, "-c", "import torch.distributed"), "PyTorch for " + PYTHON + " (Debian: python3-torch)");
        Path job = job("ddp", List.of(ClusterJobs.DDP), List.of(PYTHON, "train.py"), "rendezvous: {port: auto}\n", Map.of());

        Cli slurmRun = run(job);
        assertThat(slurmRun.code()).as(slurmRun.err()).isZero();
        assertThat(slurmRun.err()).contains("node  slurm ").contains("rendezvous " + jobs.bed.host(1).address() + ":");
        Map<Integer, String> slurmRanks = ClusterJobs.trained(slurmRun.out());
        // DistributedSampler pads 4 rows to 6 for 3 ranks: rank r trains on rows r and r + 3 (mod 4); its last row is printed
        assertThat(slurmRanks).containsExactlyEntriesOf(new TreeMap<>(Map.of(0, "h1 0.4", 1, "h1 0.1", 2, "h2 0.2")));
        assertThat(ClusterJobs.weights(slurmRun.out())).hasSize(3).as("DDP keeps every replica identical").containsOnly(ClusterJobs.weights(slurmRun.out()).get(0));

        Cli sshRun = run(job, "--set", "backend=ssh");
        assertThat(sshRun.code()).as(sshRun.err()).isZero();
        assertThat(sshRun.err()).contains("node  ssh ").doesNotContain("slurm");
        assertThat(ClusterJobs.trained(sshRun.out())).isEqualTo(slurmRanks);
        assertThat(ClusterJobs.weights(sshRun.out())).isEqualTo(ClusterJobs.weights(slurmRun.out()));
        assertThat(slurm.queue()).isEmpty();
    }

    /** Code that reads Slurm's task variables (Lightning's SLURMEnvironment, submitit) sees each worker's own rank. */
    @Test
    void eachWorkerReadsItsOwnRankInSlurmsVariables() throws Exception {
        Path job = job("slurmenv", jobs.worker("slurm_env.py"), List.of("python3", "slurm_env.py"), "", Map.of());
        Cli r = run(job);
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out().lines().filter(l -> l.contains(" RANK ")).sorted().toList()).containsExactly(
                "[h1/0] RANK 0 LOCAL_RANK 0 NODE_RANK 0 WORLD_SIZE 3 slurm 0 0 0 3 per-node 2 nodes 2 tasks 2,1",
                "[h1/1] RANK 1 LOCAL_RANK 1 NODE_RANK 0 WORLD_SIZE 3 slurm 1 1 0 3 per-node 2 nodes 2 tasks 2,1",
                "[h2/2] RANK 2 LOCAL_RANK 0 NODE_RANK 1 WORLD_SIZE 3 slurm 2 0 1 3 per-node 1 nodes 2 tasks 2,1");
    }

    /** The Slurm job id of job {@code name}'s newest run, from its summary.json. */
    private String lastJobId(String name) throws Exception {
        try (var runs = Files.list(jobs.logs.resolve(name))) {
            Path newest = runs.filter(p -> Files.exists(p.resolve("summary.json"))).max(Path::compareTo).orElseThrow();
            return JsonMapper.builder().build().readTree(Files.readString(newest.resolve("summary.json")))
                    .path("slurm").path("job_id").asString();
        }
    }

    /**
     * The job's end state in slurmctld's record (kept MinJobAge after it ends), once it has one:
     * a job whose runjob has just exited may read RUNNING or COMPLETING while slurmd ends its steps.
     */
    private String jobState(String jobId) throws Exception {
        String[] state = new String[1];
        Poll.until(() -> {
            state[0] = stateNow(jobId);
            return !List.of("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "REQUEUED").contains(state[0]);
        }, Duration.ofSeconds(30), "job " + jobId + " to end");
        return state[0];
    }

    /** The job's state in slurmctld's record now, whatever it is. */
    private String stateNow(String jobId) {
        String record;
        try {
            record = slurm.out("scontrol", "show", "job", jobId);
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
        Matcher m = Pattern.compile("JobState=(\\S+)").matcher(record);
        assertThat(m.find()).as("scontrol knows job " + jobId).isTrue();
        return m.group(1);
    }

    /**
     * A container started by podman stays in the cgroup of its node's step (where Slurm's limits,
     * accounting and cleanup are), not in podman's own {@code libpod_parent}, and sees the step's
     * variables as a task of {@code srun} does.
     */
    @Test
    void aPodmanWorkerStaysInItsStepsCgroupWithTheStepsVariables() throws Exception {
        String missing = Podman.missing();
        Testbed.require(missing == null, missing == null ? "" : missing);
        String image = Podman.image();
        env.put("CONTAINERS_CONF", Podman.CONF.toString());
        Path job = job("slurmpod", List.of(), List.of("sh", "-c", "echo rank $RANK node $SLURMD_NODENAME job $SLURM_JOB_ID step $SLURM_STEP_ID"
                        + " procid $SLURM_PROCID; grep -E ':(memory|freezer):' /proc/self/cgroup | sed \"s/^/rank $RANK cgroup /\""),
                // a label of this test's own: ContainerTest's containers may exist meanwhile, in the SSH testbed's stream
                "environment: {container: {image: '" + image + "', mounts: ['/usr:/usr:ro'], options: [--label, runjob.test=slurmpod]}}\n",
                Map.of());
        Cli r = run(job);
        assertThat(r.code()).as(r.err()).isZero();
        List<String> lines = r.out().lines().sorted().toList();
        String jobId = lines.stream().filter(l -> l.startsWith("[h1/0] rank 0 node")).findFirst().orElseThrow().replaceAll(".* job (\\d+) .*", "$1");
        assertThat(lines.stream().filter(l -> l.contains(" node ")).map(l -> l.replaceAll("step \\d+", "step S")))
                .containsExactly("[h1/0] rank 0 node h1 job " + jobId + " step S procid 0", "[h1/1] rank 1 node h1 job " + jobId + " step S procid 1",
                        "[h2/2] rank 2 node h2 job " + jobId + " step S procid 2");
        assertThat(lines.stream().filter(l -> l.contains(" cgroup ")))
                .allMatch(l -> l.matches("\\[h(\\d)/\\d] rank \\d cgroup \\d+:(memory|freezer):/slurm_h\\1/uid_0/job_\\d+"
                        + "/step_\\d+(/task_\\d+)?/libpod-[0-9a-f]{64}"))
                .hasSize(6);
        assertThat(Podman.containers("runjob.test=slurmpod")).isEmpty();
    }

    @Test
    void modulesAndAScriptAreActivatedInsideEachNodesStep() throws Exception {
        Path modules = Files.createDirectories(dir.resolve("modules/init"));
        Files.writeString(modules.resolve("bash"), "module() { [ \"$1\" = load ] || return 1; export LOADEDMODULES=\"${LOADEDMODULES:+$LOADEDMODULES:}$2\"; }\n");
        Path script = Files.writeString(dir.resolve("env.sh"), "export FROM_SCRIPT=\"sourced-on-$RUNJOB_NODE-step-$SLURM_STEP_ID\"\n");
        Path job = job("slurmenv", List.of(ClusterJobs.WORKERS.resolve("whoami.py"), script), List.of(PYTHON, "whoami.py"),
                "environment: {modules: [cuda/12.1], source: [env.sh]}\n", Map.of("MODULESHOME", dir.resolve("modules").toString()));
        Cli r = run(job);
        assertThat(r.code()).as(r.err()).isZero();
        List<String> lines = r.out().lines().filter(l -> l.contains("] rank ")).sorted().toList();
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0)).matches("\\[h1/0] rank 0 python /usr/bin/python3 script sourced-on-h1-step-\\d+ modules cuda/12.1 container False");
        assertThat(lines.get(2)).matches("\\[h2/2] rank 2 python /usr/bin/python3 script sourced-on-h2-step-\\d+ modules cuda/12.1 container False");
        assertThat(r.err()).contains("ok modules cuda/12.1, source env.sh");
    }

    @Test
    void aFailingRankStopsEveryOtherWithinKillWait() throws Exception {
        Path job = job("failfast", jobs.worker("fail_one.py"), List.of("python3", "fail_one.py"), "failure: {grace_period_s: 1}\n",
                Map.of("FAIL_RANK", "1", "FAIL_CODE", "3", "IGNORE_TERM", "1", "FAIL_AFTER_S", "0.5"));
        long t0 = System.nanoTime();
        Cli r = run(job);
        assertThat(r.code()).as(r.err()).isEqualTo(1);
        assertThat(r.err()).contains("root cause: rank 1 (local rank 1) on node h1: exit 3");
        List<Long> ranks = List.of(0L, 1L, 2L).stream().map(rank -> Long.parseLong(read(jobs.pids.resolve("rank-" + rank + ".pid")))).toList();
        Pids.awaitGone(ranks, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 2), "every rank after rank 1 failed");
        Poll.until(() -> queueEmpty(), Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 2), "the allocation is released");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(60));

    }

    @Test
    void slurmRecordsASuccessAsCompletedAndAFailureAsFailed() throws Exception {
        String nodes = evenNodes();
        Path ok = jobs.job("recorded", nodes, jobs.worker("ticks.py"), List.of("python3", "ticks.py"),
                "backend: slurm\nworkdir: " + dir.resolve("work") + "\n", Map.of("TICKS", "3"));
        Cli r = run(ok);
        assertThat(r.code()).as(r.err()).isZero();
        // runjob ended its allocation with the run's exit code, never with scancel
        assertThat(jobState(lastJobId("recorded"))).isEqualTo("COMPLETED");
        Cli failed = run(ok, "--set", "entrypoint.command=[python3, -c, 'import sys; sys.exit(4)']");
        assertThat(failed.code()).as(failed.err()).isEqualTo(1);
        assertThat(jobState(lastJobId("recorded"))).isEqualTo("FAILED");
    }

    /** Nodes h1 and h2, one worker each, with SSH addresses too, in the job's one workdir. */
    private String evenNodes() {
        SshTestbed bed = jobs.bed;
        return jobs.node(bed.host(1), 1).replace(", workdir: " + dir.resolve("work-h1"), "")
                + jobs.node(bed.host(2), 1).replace(", workdir: " + dir.resolve("work-h2"), "");
    }

    /** Nodes h1 and h2, one worker each (one sbatch component). */
    private Path evenJob(String name, String script, Map<String, String> vars) throws Exception {
        return jobs.job(name, evenNodes(), jobs.worker(script), List.of("python3", script), "backend: slurm\nworkdir: " + dir.resolve("work") + "\n", vars);
    }

    /** runjob submit JOB as its own process; its run id once it exited 0. */
    private String submit(Path job) throws Exception {
        Process p = RunjobProcess.start(dir, job, env, "submit");
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(RunjobProcess.stderrOf(dir, job)).isZero();
        return Files.readString(dir.resolve(job.getFileName() + ".out")).trim();
    }

    private String queuedJobId(String job, String runId) throws Exception {
        return JsonMapper.builder().build().readTree(Files.readString(jobs.logs.resolve(job).resolve(runId).resolve("queued.json")))
                .path("job_id").asString();
    }

    @Test
    void submitChecksEachEnvironmentOnThisMachineBeforeQueueing() throws Exception {
        // no module system here (no MODULESHOME), and none on the nodes: found before the queue wait
        Path job = job("nomods", jobs.worker("ticks.py"), List.of("python3", "ticks.py"), "environment: {modules: [cuda/12.1]}\n", Map.of());
        Cli refused = Cli.run(env, "submit", job.toString());
        assertThat(refused.code()).as(refused.err()).isEqualTo(3);
        assertThat(refused.err()).isEqualTo("runjob: checked on this machine before queueing, nodes h1, h2 fail: this node has no module system"
                + " (no module command, no MODULESHOME, no Lmod or Environment Modules init script): cannot load cuda/12.1\n"
                + "runjob: nothing is queued; where the nodes have software this machine does not, slurm.login_check: warn queues the run"
                + " anyway and off checks nothing here\n");
        assertThat(slurm.queue()).isEmpty();
        assertThat(jobs.logs.resolve("nomods")).doesNotExist();
        // login_check: warn says the same and queues the run (held here, then stopped)
        Cli warned = Cli.run(env, "submit", job.toString(), "--set", "slurm.login_check=warn", "--set", "slurm.alloc_args=[--hold]");
        assertThat(warned.code()).as(warned.err()).isZero();
        assertThat(warned.err()).startsWith("runjob: checked on this machine before queueing, nodes h1, h2 fail: this node has no module system")
                .contains("\nrunjob: queued anyway (slurm.login_check: warn): the nodes may have what this machine lacks\nrunjob: run ");
        String runId = warned.out().strip();
        assertThat(Cli.run(env, "stop", runId).code()).isZero();
        Poll.until(this::queueEmpty, Duration.ofSeconds(30), "the held run withdrawn");
        // an environment this machine has: checked and said, and the run goes to Slurm (asked only, --test-only)
        Path venv = job("venved", jobs.worker("ticks.py"), List.of("python3", "ticks.py"),
                "environment: {python: /usr/bin/python3}\nslurm: {alloc_args: [--test-only]}\n", Map.of());
        Cli checked = Cli.run(env, "submit", venv.toString());
        assertThat(checked.code()).as(checked.err()).isZero();
        assertThat(checked.err()).containsPattern("^runjob: checked on this machine before queueing, nodes h1, h2: python /usr/bin/python3;"
                + " /usr/bin/python3 \\(Python 3\\.\\d+\\.\\d+, torch [^)]+\\)\nrunjob: slurm was asked only whether it would run the job");
        // a program that is one of the run's files is not here yet: said, not held against the run
        Path shipped = job("shipped", jobs.worker("ticks.py"), List.of("./ticks.py"),
                "environment: {python: /usr/bin/python3}\nslurm: {alloc_args: [--test-only]}\n", Map.of());
        Cli tested = Cli.run(env, "submit", shipped.toString());
        assertThat(tested.code()).as(tested.err()).isZero();
        assertThat(tested.err()).startsWith("runjob: not checked on this machine before queueing, nodes h1, h2: its program ./ticks.py is one of"
                + " the run's files, which are shipped when it starts\n");
    }

    @Test
    void submitQueuesTheRunAsABatchJobThatRecordsItsEnd() throws Exception {
        Path job = evenJob("queued", "ticks.py", Map.of("TICKS", "20"));
        String runId = submit(job);
        String jobId = queuedJobId("queued", runId);
        // what an admin sees of it: the run in its comment, and the batch script says what was asked
        assertThat(slurm.out("scontrol", "show", "job", jobId)).contains("Comment=runjob:queued/" + runId);
        assertThat(Files.readString(jobs.logs.resolve("queued").resolve(runId).resolve("submit.sh")))
                .contains("\n#SBATCH --job-name=runjob-queued\n#SBATCH --comment=runjob:queued/" + runId + "\n");
        // a follow-on job that waits for the run's success, as a pipeline would
        String after = sbatch("--job-name=after", "--dependency=afterok:" + jobId, "--nodelist=h1", "--output=/dev/null", "--wrap", "true");
        // the run's runjob is the batch step's, under slurmstepd: nothing of the run is a child of the submitting runjob, which exited
        Poll.until(() -> Cli.run(env, "status", runId).out().contains("succeeded (exit 0)"), Duration.ofSeconds(90), "the queued run to succeed");
        assertThat(RunjobProcess.stderrOf(dir, job)).contains("; its folder is " + jobs.logs.resolve("queued").resolve(runId)
                + " (the nodes must see it), the batch job's own output " + jobs.logs.resolve("queued").resolve(runId).resolve("slurm-" + jobId + ".out"));
        JsonNode record = JsonMapper.builder().build().readTree(Files.readString(jobs.logs.resolve("queued").resolve(runId).resolve("queued.json")));
        assertThat(record.path("command").get(0).asString()).as("the command it was queued with is kept").isEqualTo("sbatch");
        assertThat(record.path("command").toString()).contains("\"--job-name=runjob-queued\"", "\"--nodelist=h1,h2\"");
        assertThat(Files.readString(jobs.logs.resolve("queued").resolve(runId).resolve("all.log")).lines()
                .filter(l -> l.matches(".*rank \\d tick \\d+")).count()).isEqualTo(2 * 20);
        Poll.until(this::queueEmpty, Duration.ofSeconds(30), "the batch job to leave the queue");
        assertThat(jobState(jobId)).isEqualTo("COMPLETED");
        assertThat(Cli.run(env, "runs").out()).containsPattern(runId + " +queued +succeeded ");
        assertThat(jobState(after)).as("the afterok job ran").isEqualTo("COMPLETED");
    }

    /** submit --dry-run prints what sbatch is handed, which Slurm takes as it is; --test-only in alloc_args asks Slurm and queues nothing. */
    @Test
    void submitDryRunPrintsTheExactSbatchCommandAndTestOnlyAsksSlurm() throws Exception {
        Path job = evenJob("shown", "ticks.py", Map.of("TICKS", "1"));
        Cli dry = Cli.run(env, "submit", "--dry-run", job.toString());
        assertThat(dry.code()).as(dry.err()).isZero();
        List<String> lines = dry.out().lines().toList();
        assertThat(lines.get(0)).isEqualTo("# runjob submit runs, once it made the run folder " + jobs.logs.resolve("shown").resolve("RUN_ID")
                + " (RUN_FOLDER below):");
        String sbatch = lines.get(1);
        assertThat(sbatch).startsWith("sbatch --parsable --job-name=runjob-shown --comment=runjob:shown/RUN_ID --output=RUN_FOLDER/slurm-%j.out"
                + " --open-mode=append"
                + " --signal=B:USR1@90 --nodelist=h1,h2 --nodes=2 --ntasks-per-node=1 RUN_FOLDER/submit.sh ")
                .contains(" run RUN_FOLDER/submitted.yaml --run-id RUN_ID --continue-requeued --set logs.dir=" + jobs.logs + " --");
        assertThat(lines.get(2)).isEqualTo("# RUN_FOLDER/submit.sh, the batch script (the coordinator's argv comes as its arguments):");
        assertThat(dry.out()).contains("#!/bin/sh\n# runjob's batch step: the coordinator's argv comes as arguments\n"
                + "# what sbatch was asked (the same options are on its command line):\n#SBATCH --job-name=runjob-shown\n"
                + "#SBATCH --comment=runjob:shown/RUN_ID\n#SBATCH --output=RUN_FOLDER/slurm-%j.out\n#SBATCH --open-mode=append\n"
                + "#SBATCH --signal=B:USR1@90\n#SBATCH --nodelist=h1,h2\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\nexec \"$@\"\n");
        assertThat(jobs.logs.resolve("shown")).doesNotExist();
        assertThat(slurm.queue()).isEmpty();
        // the printed command, with a folder for RUN_FOLDER, is one Slurm accepts: asked with --test-only, it says when it would run it
        Path folder = Files.createDirectories(dir.resolve("shown-folder"));
        Files.writeString(folder.resolve("submit.sh"), dry.out().substring(dry.out().indexOf("#!/bin/sh")));
        String asked = slurm.out("bash", "-c", sbatch.replace("RUN_FOLDER", folder.toString()).replaceFirst("^sbatch ", "sbatch --test-only "));
        assertThat(asked).containsPattern("sbatch: Job \\d+ to start at \\S+ using 2 processors on nodes h\\[1-2\\] in partition");
        assertThat(slurm.queue()).isEmpty();

        Cli testOnly = Cli.run(env, "submit", "--set", "slurm.alloc_args=[--test-only]", job.toString());
        assertThat(testOnly.code()).as(testOnly.err()).isZero();
        assertThat(testOnly.out()).isEmpty();
        assertThat(testOnly.err()).containsPattern("runjob: slurm was asked only whether it would run the job \\(--test-only\\), and said: sbatch: Job"
                + " \\d+ to start at ");
        try (var runs = Files.list(jobs.logs.resolve("shown"))) {
            assertThat(runs.toList()).as("no run folder is left").isEmpty();
        }
        assertThat(slurm.queue()).isEmpty();
    }

    @Test
    void nodesGivenAsACountAreTheOnesTheAllocationHolds() throws Exception {
        String extra = "backend: slurm\nworkdir: " + dir.resolve("work") + "\n";
        Path job = jobs.job("counted", "  - {count: 2, workers: 1}\n", jobs.worker("where.py"), List.of("python3", "where.py"), extra, Map.of());
        Cli dry = run(job, "--dry-run");
        assertThat(dry.code()).as(dry.err()).isZero();
        assertThat(dry.out()).contains("salloc --job-name=runjob-counted --nodes=2 --ntasks-per-node=1 sh -c ")
                .contains("srun --jobid=JOBID --job-name=runjob-agent --nodelist=NODE1 ");
        // outside an allocation nothing names the nodes: refused before anything is asked of Slurm
        Cli outside = run(job);
        assertThat(outside.code()).isEqualTo(3);
        assertThat(outside.err()).contains("runjob: the job's 2 nodes are given as a count, and Slurm names them when it allocates them:"
                + " queue the run with `runjob submit`, or run runjob inside an allocation (salloc --nodes=2)\n");
        assertThat(slurm.queue()).isEmpty();

        // with h1 held by another job, Slurm can only give h2 and h3: the run's nodes, ranks and master are those
        String holder = sbatch("--job-name=holder", "--exclusive", "--nodelist=h1", "--output=/dev/null", "--wrap", "sleep 300");
        Poll.until(() -> queueHas(holder + " RUNNING holder"), Duration.ofSeconds(30), "the holder job to run on h1");
        String runId = submit(job);
        String jobId = queuedJobId("counted", runId);
        Poll.until(() -> Cli.run(env, "status", runId).out().contains("succeeded (exit 0)"), Duration.ofSeconds(90), "the counted run to succeed");
        String master = jobs.bed.host(2).address();
        assertThat(Files.readString(jobs.logs.resolve("counted").resolve(runId).resolve("all.log")).lines()
                .filter(l -> l.contains("] rank ")).sorted().toList())
                .containsExactly("[h2/0] rank 0 of 2 node 0 master " + master, "[h3/1] rank 1 of 2 node 1 master " + master);
        cancel(holder);
        Poll.until(this::queueEmpty, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 10), "the queue to empty");
        assertThat(jobState(jobId)).isEqualTo("COMPLETED");
        // resume here, outside any allocation, is refused before anything runs: the run's records are as they were
        Path folder = jobs.logs.resolve("counted").resolve(runId);
        String summary = Files.readString(folder.resolve("summary.json"));
        String status = Files.readString(folder.resolve("status.json"));
        Cli resume = Cli.run(env, "resume", runId);
        assertThat(resume.code()).as(resume.err()).isEqualTo(3);
        assertThat(resume.err()).contains("given as a count").endsWith("runjob: run " + runId + " was not resumed: it reads as before\n");
        assertThat(Files.readString(folder.resolve("summary.json"))).isEqualTo(summary);
        assertThat(Files.readString(folder.resolve("status.json"))).isEqualTo(status);
        assertThat(folder.resolve("summary.until-attempt-0.json")).doesNotExist();
        assertThat(Cli.run(env, "status", runId).out()).contains("succeeded (exit 0)");

        // inside the user's allocation of h1 and h3, a count of 1 is its first node
        Path one = jobs.job("counted1", "  - {count: 1, workers: 2}\n", jobs.worker("where.py"), List.of("python3", "where.py"), extra, Map.of());
        assertThat(insideSalloc("one", one, "--nodes=2", "--nodelist=h1,h3")).as(read(dir.resolve("one.err"))).isZero();
        String h1 = jobs.bed.host(1).address();
        assertThat(Files.readString(dir.resolve("one.out")).lines().filter(l -> l.contains("] rank ")).sorted().toList())
                .containsExactly("[h1/0] rank 0 of 2 node 0 master " + h1, "[h1/1] rank 1 of 2 node 0 master " + h1);
        // an allocation of fewer nodes than the count: refused, naming what it holds
        assertThat(insideSalloc("few", job, "--nodes=1", "--nodelist=h3")).as(read(dir.resolve("few.err"))).isEqualTo(3);
        assertThat(Files.readString(dir.resolve("few.err"))).containsPattern("runjob: runjob runs inside Slurm job \\d+, which holds 1 node"
                + " \\(h3\\); the job asks for 2\n");
    }

    /** {@code salloc --ntasks-per-node=2 ARGS runjob JOB}, the user's own allocation: its exit code, its output in NAME.out and NAME.err. */
    private int insideSalloc(String name, Path job, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("salloc", "--job-name=users-own", "--ntasks-per-node=2"));
        cmd.addAll(List.of(args));
        cmd.addAll(RunjobJvm.command(List.of(job.toString())));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(dir.resolve(name + ".out").toFile())
                .redirectError(dir.resolve(name + ".err").toFile());
        pb.environment().putAll(env);
        Process salloc = pb.start();
        running.add(salloc);
        assertThat(salloc.waitFor(90, TimeUnit.SECONDS)).as(name + ": salloc ends").isTrue();
        return salloc.exitValue();
    }

    @Test
    void submitQueuesNodesOfSeveralGpuCountsAndOfUnequalWorkerCounts() throws Exception {
        String extra = "backend: slurm\nworkdir: " + dir.resolve("work") + "\n";
        // two GPU counts: a heterogeneous batch job, its batch step (runjob) on the first component's node
        Path het = jobs.job("het", "  - {name: h1, gpus: [0]}\n  - {name: h2, gpus: [0, 1]}\n", jobs.worker("where.py"),
                List.of("python3", "where.py"), extra, Map.of());
        // one GPU count, unequal workers: laid out by the hostfile in the run folder
        Path unequal = jobs.job("unequal", "  - {name: h1, workers: 1}\n  - {name: h3, workers: 2}\n", jobs.worker("where.py"),
                List.of("python3", "where.py"), extra, Map.of());
        String hetRun = submit(het);
        String unequalRun = submit(unequal);
        Poll.until(() -> Cli.run(env, "status", hetRun).out().contains("succeeded (exit 0)")
                && Cli.run(env, "status", unequalRun).out().contains("succeeded (exit 0)"), Duration.ofSeconds(120), "both runs to succeed");
        String h1 = jobs.bed.host(1).address();
        assertThat(ranks("het", hetRun)).containsExactly("[h1/0] rank 0 of 3 node 0 master " + h1,
                "[h2/1] rank 1 of 3 node 1 master " + h1, "[h2/2] rank 2 of 3 node 1 master " + h1);
        assertThat(ranks("unequal", unequalRun)).containsExactly("[h1/0] rank 0 of 3 node 0 master " + h1,
                "[h3/1] rank 1 of 3 node 1 master " + h1, "[h3/2] rank 2 of 3 node 1 master " + h1);
        assertThat(Files.readAllLines(jobs.logs.resolve("unequal").resolve(unequalRun).resolve("hostfile"))).containsExactly("h1", "h3", "h3");
        Poll.until(this::queueEmpty, Duration.ofSeconds(30), "both jobs to leave the queue");
        assertThat(jobState(queuedJobId("het", hetRun))).isEqualTo("COMPLETED");
        assertThat(jobState(queuedJobId("unequal", unequalRun))).isEqualTo("COMPLETED");
    }

    /** The lines of where.py in a run's all.log, sorted. */
    private List<String> ranks(String job, String runId) throws IOException {
        return Files.readString(jobs.logs.resolve(job).resolve(runId).resolve("all.log")).lines().filter(l -> l.contains("] rank ")).sorted().toList();
    }

    /**
     * A submitted sweep of 6 with --max-parallel 2 is one job array (--array=0-5%2): each task runs
     * its own point in its own run folder, and no more than 2 run at once, although the 4 nodes
     * of the cluster have room for 4 one-node tasks.
     */
    @Test
    void aSubmittedSweepIsOneJobArrayThatRunsAtMostMaxParallelTasksAtOnce() throws Exception {
        String extra = "backend: slurm\nworkdir: " + dir.resolve("work") + "\nsweep: {n: [0, 1, 2, 3, 4, 5]}\n";
        Path job = jobs.job("arrayed", "  - {count: 1, workers: 1}\n", List.of(),
                List.of("python3", "-c", "'import sys, time; time.sleep(2); print(\"n\", sys.argv[1])'", "'${sweep.n}'"), extra, Map.of());
        Cli dry = Cli.run(env, "submit", "--dry-run", "--max-parallel", "2", job.toString());
        assertThat(dry.code()).as(dry.err()).isZero();
        assertThat(dry.out().lines().toList().get(1)).startsWith("sbatch --parsable --job-name=runjob-arrayed --comment=runjob:arrayed/sweep-ID"
                + " --array=0-5%2"
                + " --output=SWEEP_FOLDER/slurm-%A_%a.out --open-mode=append ")
                .contains(" SWEEP_FOLDER/submit.sh ").contains(" run SWEEP_FOLDER/array.json --array-task --continue-requeued ");
        Process p = RunjobProcess.start(dir, job, env, "submit", "--max-parallel", "2");
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String err = RunjobProcess.stderrOf(dir, job);
        assertThat(p.exitValue()).as(err).isZero();
        List<String> runIds = Files.readAllLines(dir.resolve(job.getFileName() + ".out"));
        assertThat(runIds).hasSize(6);
        Matcher m = Pattern.compile("runjob: (sweep-\\S+) of job arrayed: 6 runs queued as slurm job array (\\d+) \\(tasks 0-5, at most 2 at once\\);"
                + " its folder is (\\S+), task 0's batch output \\S+/slurm-\\d+_0.out; runjob runs lists them").matcher(err);
        assertThat(m.find()).as(err).isTrue();
        String array = m.group(2);
        Path sweepFolder = Path.of(m.group(3));
        assertThat(sweepFolder).isEqualTo(jobs.logs.resolve("arrayed").resolve(m.group(1)));
        assertThat(slurm.out("scontrol", "-o", "show", "job", array + "_5")).contains("ArrayTaskThrottle=2");
        for (String runId : runIds) {
            Poll.until(() -> Cli.run(env, "status", runId).out().contains("succeeded (exit 0)"), Duration.ofSeconds(120), "run " + runId);
        }
        List<Instant[]> windows = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            Path folder = jobs.logs.resolve("arrayed").resolve(runIds.get(i));
            assertThat(Files.readString(folder.resolve("rank-0.log"))).isEqualTo("n " + i + "\n");
            assertThat(queuedJobId("arrayed", runIds.get(i))).isEqualTo(array + "_" + i);
            // what submit --resume runs: the run queued alone, as a submit of its point would
            List<String> alone = new ArrayList<>();
            JsonMapper.builder().build().readTree(Files.readString(folder.resolve("queued.json"))).path("command").forEach(w -> alone.add(w.asString()));
            assertThat(alone).startsWith("sbatch", "--parsable", "--job-name=runjob-arrayed", "--comment=runjob:arrayed/" + runIds.get(i),
                    "--output=" + folder.resolve("slurm-%j.out"))
                    .contains("--run-id", runIds.get(i), "--sweep-point", Integer.toString(i)).doesNotContain("--array-task")
                    .noneMatch(w -> w.startsWith("--array"));
            JsonNode summary = JsonMapper.builder().build().readTree(Files.readString(folder.resolve("summary.json")));
            assertThat(summary.path("sweep").path("n").asString()).isEqualTo(Integer.toString(i));
            windows.add(new Instant[] {Instant.parse(summary.path("start").asString()), Instant.parse(summary.path("end").asString())});
            assertThat(sweepFolder.resolve("slurm-" + array + "_" + i + ".out")).isRegularFile();
            assertThat(jobState(array + "_" + i)).isEqualTo("COMPLETED");
        }
        int most = 0;
        for (Instant[] w : windows) {
            most = Math.max(most, (int) windows.stream().filter(o -> o[0].isBefore(w[1]) && w[0].isBefore(o[1])).count());
        }
        assertThat(most).as("runs at once").isBetween(1, 2);
        assertThat(Cli.run(env, "runs").out()).contains(m.group(1) + " of job arrayed: 6 runs (runjob stop " + m.group(1) + " stops them all)\n");
        // the sweep's folder is no run of its own
        assertThat(Cli.run(env, "runs").out()).doesNotContain("arrayed/" + m.group(1));
        Poll.until(this::queueEmpty, Duration.ofSeconds(30), "the array to leave the queue");
    }

    @Test
    void aSubmittedSweepIsABatchJobPerPointAndStopsAsOne() throws Exception {
        String extra = "backend: slurm\nworkdir: " + dir.resolve("work") + "\nsweep: {lr: [1, 2, 3]}\n";
        Path job = jobs.job("swept", "  - {name: h1, workers: 1}\n", List.of(),
                List.of("python3", "-c", "'import sys; print(\"lr\", sys.argv[1])'", "'${sweep.lr}'"), extra, Map.of());
        Process p = RunjobProcess.start(dir, job, env, "submit");
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String err = RunjobProcess.stderrOf(dir, job);
        assertThat(p.exitValue()).as(err).isZero();
        List<String> runIds = Files.readAllLines(dir.resolve(job.getFileName() + ".out"));
        assertThat(runIds).hasSize(3);
        Matcher id = Pattern.compile("runjob: (sweep-\\S+) of job swept: 3 runs queued as slurm job array \\d+ \\(tasks 0-2\\); ").matcher(err);
        assertThat(id.find()).as(err).isTrue();
        for (String runId : runIds) {
            Poll.until(() -> Cli.run(env, "status", runId).out().contains("succeeded (exit 0)"), Duration.ofSeconds(90), "run " + runId);
        }
        for (int i = 0; i < 3; i++) {
            Path folder = jobs.logs.resolve("swept").resolve(runIds.get(i));
            assertThat(Files.readString(folder.resolve("rank-0.log"))).isEqualTo("lr " + (i + 1) + "\n");
            JsonNode summary = JsonMapper.builder().build().readTree(Files.readString(folder.resolve("summary.json")));
            assertThat(summary.path("sweep").path("lr").asString()).isEqualTo(Integer.toString(i + 1));
        }
        assertThat(Cli.run(env, "runs").out()).contains(id.group(1) + " of job swept: 3 runs (runjob stop " + id.group(1) + " stops them all)\n");
        Poll.until(this::queueEmpty, Duration.ofSeconds(30), "the sweep's jobs to leave the queue");

        // a sweep of runs that sleep: stop SWEEP reaches each through Slurm
        Path sleepy = jobs.job("sleepy", "  - {name: h1, workers: 1}\n", jobs.worker("sleeper.py"), List.of("python3", "sleeper.py"),
                "backend: slurm\nworkdir: " + dir.resolve("work") + "\nsweep: {n: [0, 1]}\n", Map.of("PID_TAG", "${sweep.n}"));
        // submitted by a runjob with a JVM flag of its own, which its runs' coordinators get too
        List<String> cmd = RunjobJvm.command(List.of("-Xss1280k"), List.of("submit", sleepy.toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(dir.resolve("sleepy.yaml.out").toFile())
                .redirectError(dir.resolve("sleepy.yaml.err").toFile()).directory(dir.toFile());
        pb.environment().putAll(env);
        p = pb.start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String sleepyErr = RunjobProcess.stderrOf(dir, sleepy);
        assertThat(p.exitValue()).as(sleepyErr).isZero();
        Matcher sweepId = Pattern.compile("runjob: (sweep-\\S+) of job sleepy").matcher(sleepyErr);
        assertThat(sweepId.find()).isTrue();
        // each point's rank 0 writes rank-0-N.pid
        List<Long> ranks = Pids.await(jobs.pids, "rank-0", 2, Duration.ofSeconds(90));
        List<String> coordinators = ProcessHandle.allProcesses().map(h -> h.info().commandLine().orElse(""))
                .filter(c -> c.contains(" run ") && c.contains("/sleepy/sweep-") && c.contains(" --array-task ")).toList();
        assertThat(coordinators).hasSize(2).allMatch(c -> c.contains(" -Xss1280k -cp "));
        Cli stop = Cli.run(env, "stop", sweepId.group(1));
        assertThat(stop.code()).as(stop.err()).isZero();
        for (String runId : Files.readAllLines(dir.resolve(sleepy.getFileName() + ".out"))) {
            assertThat(stop.err()).contains("runjob: run " + runId + " interrupted (exit 130)\n");
        }
        Pids.awaitGone(ranks, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 5), "the sweep's ranks");
        Poll.until(this::queueEmpty, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 10), "the queue to empty after stop");

        // a sweep whose second run sbatch refuses (no such partition): queued whole or not at all
        Path half = jobs.job("half", "  - {name: h1, workers: 1}\n", jobs.worker("sleeper.py"), List.of("python3", "sleeper.py"),
                "backend: slurm\nworkdir: " + dir.resolve("work") + "\nsweep: {p: [debug, nosuch]}\nslurm: {partition: '${sweep.p}'}\n",
                Map.of());
        // its points ask for different partitions: no one job array; held to --max-parallel by lanes, withdrawn the same
        p = RunjobProcess.start(dir, half, env, "submit", "--max-parallel", "1");
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String halfErr = RunjobProcess.stderrOf(dir, half);
        assertThat(p.exitValue()).as(halfErr).isEqualTo(3);
        assertThat(halfErr).contains("runjob: slurm refused the run: ").contains("invalid partition")
                .containsPattern("runjob: sweep-\\S+ is not queued: run 2 of 2 could not be, and the 1 queued before it were withdrawn\n");
        assertThat(Files.readString(dir.resolve(half.getFileName() + ".out"))).isEmpty();
        Poll.until(this::queueEmpty, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 10), "the withdrawn run gone from the queue");
        try (var folders = Files.list(jobs.logs.resolve("half"))) {
            assertThat(folders.toList()).as("no run folder left").isEmpty();
        }
    }

    @Test
    void aSweepThatCannotBeOneArrayIsHeldToMaxParallelByOneLaneOfJobsPerSlot() throws Exception {
        // each point asks for another time limit: a batch job each, and --max-parallel 1 runs them one after another
        String extra = "backend: slurm\nworkdir: " + dir.resolve("work") + "\nsweep: {t: ['5', '6']}\nslurm: {time: '${sweep.t}'}\n";
        Path job = jobs.job("laned", "  - {count: 1, workers: 1}\n", List.of(),
                List.of("python3", "-c", "'import sys, time; time.sleep(3); print(\"t\", sys.argv[1])'", "'${sweep.t}'"), extra, Map.of());
        Cli dry = Cli.run(env, "submit", "--dry-run", "--max-parallel", "1", job.toString());
        assertThat(dry.code()).as(dry.err()).isZero();
        assertThat(dry.out().lines().toList().get(0)).isEqualTo("# a sweep of 2 runs: one batch job each (run 2 asks for another allocation"
                + " than the first), at most 1 at once: run N waits for run N-1 in lane N mod 1; the first run's:");
        assertThat(dry.out()).contains("\nsbatch --parsable --job-name=runjob-laned.sweep-ID.lane0 --dependency=singleton"
                + " --comment=runjob:laned/RUN_ID ");
        Process p = RunjobProcess.start(dir, job, env, "submit", "--max-parallel", "1");
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String err = RunjobProcess.stderrOf(dir, job);
        assertThat(p.exitValue()).as(err).isZero();
        Matcher m = Pattern.compile("runjob: (sweep-\\S+) of job laned: 2 runs queued as slurm jobs (\\d+)-(\\d+) \\(run 2 asks for another"
                + " allocation than the first, so not as one job array; at most 1 at once: run N waits for run N-1\\); ").matcher(err);
        assertThat(m.find()).as(err).isTrue();
        String lane = "runjob-laned." + m.group(1) + ".lane0";
        List<String> runIds = Files.readAllLines(dir.resolve(job.getFileName() + ".out"));
        assertThat(runIds).hasSize(2);
        List<Instant[]> windows = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            String runId = runIds.get(i);
            Poll.until(() -> Cli.run(env, "status", runId).out().contains("succeeded (exit 0)"), Duration.ofSeconds(120), "run " + runId);
            Path folder = jobs.logs.resolve("laned").resolve(runId);
            assertThat(Files.readString(folder.resolve("rank-0.log"))).isEqualTo("t " + (5 + i) + "\n");
            String jobId = queuedJobId("laned", runId);
            assertThat(jobId).isEqualTo(m.group(2 + i));
            assertThat(jobState(jobId)).isEqualTo("COMPLETED");
            assertThat(slurm.out("scontrol", "-o", "show", "job", jobId)).contains(" JobName=" + lane + " ")
                    .contains(" TimeLimit=00:0" + (5 + i) + ":00 ");
            JsonNode summary = JsonMapper.builder().build().readTree(Files.readString(folder.resolve("summary.json")));
            windows.add(new Instant[] {Instant.parse(summary.path("start").asString()), Instant.parse(summary.path("end").asString())});
        }
        assertThat(windows.get(1)[0]).as("run 2 starts after run 1 ended").isAfterOrEqualTo(windows.get(0)[1]);
    }

    @Test
    void aSubmittedRunWhoseNodeCannotSeeItsFolderSaysSo() throws Exception {
        Path job = evenJob("unseen", "ticks.py", Map.of("TICKS", "1"));
        Files.writeString(job, Files.readString(job) + "slurm: {alloc_args: [--hold]}\n");
        String runId = submit(job);
        String jobId = queuedJobId("unseen", runId);
        // while the job is held, the folder leaves: the node sees what a node without the login node's filesystem sees
        Path folder = jobs.logs.resolve("unseen").resolve(runId);
        Path aside = Files.move(folder, dir.resolve("aside"));
        assertThat(slurm.out("scontrol", "release", jobId)).isEmpty();
        Poll.until(this::queueEmpty, Duration.ofSeconds(30), "the job to end on its node");
        Files.move(aside, folder);
        Cli status = Cli.run(env, "status", runId);
        // Slurm could not make the job's output file in the folder: the batch step failed before its command (0:53)
        assertThat(status.out()).isEqualTo("run " + runId + " of job unseen: failed to start\nwhy: Slurm job " + jobId
                + " failed on h1 before runjob started (FAILED, exit code 0:53): is the run folder on a filesystem h1 shares?"
                + " Slurm writes the job's output there\nfolder " + folder + "\n");
        assertThat(Cli.run(env, "runs").out()).containsPattern(runId + " +unseen +failed to start ");
    }

    @Test
    void aSubmittedRunStopsGracefullyBeforeItsTimeLimitWithItsWorkersLastLines() throws Exception {
        String nodes = evenNodes();
        // a 2 min limit and a warning 30 s before it: Slurm may send it up to 60 s early, so 30-90 s in, after the workers started
        Path job = jobs.job("timed", nodes, jobs.worker("term_reporter.py"), List.of("python3", "term_reporter.py"),
                "backend: slurm\nworkdir: " + dir.resolve("work") + "\nslurm: {time: '2', stop_before_limit_s: 30}\nfailure: {grace_period_s: 2}\n", Map.of());
        String runId = submit(job);
        String jobId = queuedJobId("timed", runId);
        jobs.awaitPids(2, Duration.ofSeconds(30));
        Poll.until(() -> Cli.run(env, "status", runId).out().contains("interrupted (exit 130)"), Duration.ofSeconds(110),
                "the run to stop at Slurm's time-limit warning");
        Path folder = jobs.logs.resolve("timed").resolve(runId);
        assertThat(Files.readString(folder.resolve("all.log"))).contains("[h1/0] rank 0 got TERM\n").contains("[h2/1] rank 1 got TERM\n");
        JsonNode summary = JsonMapper.builder().build().readTree(Files.readString(folder.resolve("summary.json")));
        assertThat(summary.path("interrupted_by").asString()).isEqualTo(Interrupts.TIME_LIMIT);
        // the report follows summary.json (which status reads) into the batch job's output
        Path out = folder.resolve("slurm-" + jobId + ".out");
        Poll.until(() -> {
            try {
                return Files.readString(out).contains("interrupted (" + Interrupts.TIME_LIMIT + "): every worker was stopped");
            } catch (IOException e) {
                return false;
            }
        }, Duration.ofSeconds(15), "the run's report in " + out);
        Poll.until(this::queueEmpty, Duration.ofSeconds(30), "the batch job to leave the queue");
        assertThat(jobState(jobId)).as("ended by runjob before Slurm's limit: not TIMEOUT").isEqualTo("FAILED");
    }

    /** requeue_on_time_limit: stopped at the warning, the run requeues its job and finishes as its next attempt. */
    @Test
    void aSubmittedRunPastItsTimeLimitRequeuesItselfAndFinishes() throws Exception {
        Path job = jobs.job("past", evenNodes(), jobs.worker("requeued.py"), List.of("python3", "requeued.py"), "backend: slurm\nworkdir: "
                + dir.resolve("work") + "\nslurm: {time: '2', stop_before_limit_s: 30, requeue_on_time_limit: true}\nfailure: {grace_period_s: 2}\n",
                Map.of());
        String runId = submit(job);
        String jobId = queuedJobId("past", runId);
        jobs.awaitPids(2, Duration.ofSeconds(30));
        Path folder = jobs.logs.resolve("past").resolve(runId);
        Poll.until(() -> Cli.run(env, "status", runId).out().contains("requeued (until "), Duration.ofSeconds(120),
                "the run to requeue itself at Slurm's time-limit warning", () -> seen(runId, jobId, folder));
        assertThat(slurm.out("scontrol", "update", "JobId=" + jobId, "StartTime=now+3")).isEmpty();
        Poll.until(() -> Cli.run(env, "status", runId).out().contains("succeeded (exit 0)"), Duration.ofSeconds(150),
                "the requeued run to succeed", () -> seen(runId, jobId, folder));
        assertThat(Files.readString(folder.resolve("rank-1.attempt-1.log"))).isEqualTo("rank 1 attempt 1 restarts 1\n");
        JsonNode first = JsonMapper.builder().build().readTree(Files.readString(folder.resolve("summary.until-attempt-0.json")));
        assertThat(first.path("interrupted_by").asString()).isEqualTo(Interrupts.TIME_LIMIT);
        assertThat(Files.readString(folder.resolve("slurm-" + jobId + ".out"))).contains("runjob: Slurm job " + jobId
                + " is requeued (slurm.requeue_on_time_limit), continuation 1 of at most 5: the run goes on as its next attempt when Slurm"
                + " starts it again\n");
        Poll.until(this::queueEmpty, Duration.ofSeconds(30), "the batch job to leave the queue");
        assertThat(jobState(jobId)).isEqualTo("COMPLETED");
    }

    @Test
    void anInteractiveRunStopsGracefullyBeforeItsAllocationsTimeLimit() throws Exception {
        String nodes = evenNodes();
        // a 1 min limit, the stop 45 s before it: salloc's job gets no signal, runjob reads the end from slurmctld
        Path job = jobs.job("limited", nodes, jobs.worker("term_reporter.py"), List.of("python3", "term_reporter.py"),
                "backend: slurm\nworkdir: " + dir.resolve("work") + "\nslurm: {time: '1', stop_before_limit_s: 45}\nfailure: {grace_period_s: 2}\n",
                Map.of());
        Cli r = run(job);
        assertThat(r.code()).as(r.err()).isEqualTo(130);
        String jobId = lastJobId("limited");
        assertThat(r.err()).containsPattern("\nrunjob: time limit: Slurm job " + jobId + " ends at \\S+ \\(its time limit\\);"
                + " runjob stops the run 45 s before \\(slurm.stop_before_limit_s\\)\n");
        assertThat(r.out()).contains("[h1/0] rank 0 got TERM\n").contains("[h2/1] rank 1 got TERM\n");
        JsonNode summary = JsonMapper.builder().build().readTree(Files.readString(jobs.logs.resolve("limited").resolve(Cli.RUN_ID)
                .resolve("summary.json")));
        assertThat(summary.path("interrupted_by").asString()).startsWith("time limit: Slurm job " + jobId + " ends at ");
        assertThat(jobState(jobId)).as("ended by runjob before Slurm's limit: not TIMEOUT").isEqualTo("FAILED");
    }

    @Test
    void aRequeuedRunGoesOnAsItsNextAttemptInTheSameFolder() throws Exception {
        // what preemption does to a --requeue job; Slurm holds a requeued job back 2 min, which the test skips
        String[] requeued = requeuedWhileRunning("requeued");
        String runId = requeued[0];
        String jobId = requeued[1];
        awaitPending(jobId);
        // in Slurm's hold the run is not over: it reads requeued, on one line, until Slurm starts it again
        String status = Cli.run(env, "status", runId).out();
        assertThat(status).containsPattern("requeued \\(until \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\)").doesNotContain("interrupted");
        assertThat(Cli.run(env, "runs").out().lines().filter(l -> l.contains(runId)).toList()).singleElement().asString()
                .containsPattern(" requeued \\(until \\S+\\)");
        // not "now": slurmd refuses a job whose new credential is from the second its old one was revoked in
        // ("Killing non-startable batch job: Job credential revoked", seen in CI); Slurm's own 2 min hold avoids that
        assertThat(slurm.out("scontrol", "update", "JobId=" + jobId, "StartTime=now+3")).isEmpty();
        Path folder = jobs.logs.resolve("requeued").resolve(runId);
        // started again, before its runjob has written a status: attempt 0's summary says interrupted, the run is running
        Poll.until(() -> {
            try {
                return stateNow(jobId).equals("RUNNING");
            } catch (Exception e) {
                return false;
            }
        }, Duration.ofSeconds(150), "the requeued job to run again"); // a start slurmd refuses is held back 2 min again
        assertThat(Cli.run(env, "status", runId).out()).startsWith("run " + runId + " of job requeued: running").doesNotContain("interrupted");
        // a timeout says where the run and the job stood (this wait once timed out in CI)
        Poll.until(() -> Cli.run(env, "status", runId).out().contains("succeeded (exit 0)"), Duration.ofSeconds(150),
                "the requeued run to succeed", () -> seen(runId, jobId, folder));
        try (var runs = Files.list(jobs.logs.resolve("requeued"))) {
            assertThat(runs.count()).as("one run folder: the same run went on").isEqualTo(1);
        }
        assertThat(Files.readString(folder.resolve("rank-0.log"))).isEqualTo("rank 0 attempt 0 restarts 0\n");
        assertThat(Files.readString(folder.resolve("rank-1.attempt-1.log"))).isEqualTo("rank 1 attempt 1 restarts 1\n");
        JsonNode summary = JsonMapper.builder().build().readTree(Files.readString(folder.resolve("summary.json")));
        assertThat(summary.path("result").asString()).isEqualTo("succeeded");
        assertThat(summary.path("attempts").get(0).path("attempt").asInt()).isEqualTo(1);
        assertThat(folder.resolve("summary.until-attempt-0.json")).isRegularFile();
        assertThat(Files.readString(folder.resolve("slurm-" + jobId + ".out")))
                .contains("runjob: run " + runId + " started again by its scheduler (restart 1): it goes on as attempt 1\n");
        Poll.until(this::queueEmpty, Duration.ofSeconds(30), "the batch job to leave the queue");
        assertThat(jobState(jobId)).isEqualTo("COMPLETED");
    }

    /** submit --resume queues a submitted run that ended as its next attempt, in its folder; a live one is refused. */
    @Test
    void submitResumeQueuesAnEndedRunsNextAttempt() throws Exception {
        Path job = evenJob("again", "requeued.py", Map.of());
        String runId = submit(job);
        String first = queuedJobId("again", runId);
        jobs.awaitPids(2, Duration.ofSeconds(90));
        Cli early = Cli.run(env, "submit", "--resume", runId);
        assertThat(early.code()).isEqualTo(2);
        assertThat(early.err()).isEqualTo("runjob: run " + runId + " is running: it has not ended (runjob stop " + runId + " ends it)\n");
        Cli stop = Cli.run(env, "stop", runId);
        assertThat(stop.code()).as(stop.err()).isZero();
        Poll.until(this::queueEmpty, Duration.ofSeconds(30), "the stopped job to leave the queue");
        // two at once: one queues the run again, the other leaves it be
        CompletableFuture<Cli> one = CompletableFuture.supplyAsync(() -> Cli.run(env, "submit", "--resume", runId));
        CompletableFuture<Cli> other = CompletableFuture.supplyAsync(() -> Cli.run(env, "submit", "--resume", runId));
        List<Cli> both = List.of(one.get(60, TimeUnit.SECONDS), other.get(60, TimeUnit.SECONDS));
        assertThat(both.stream().map(Cli::code).sorted().toList()).as(both.get(0).err() + both.get(1).err()).containsExactly(0, 2);
        Cli resumed = both.get(0).code() == 0 ? both.get(0) : both.get(1);
        Cli refused = both.get(0).code() == 0 ? both.get(1) : both.get(0);
        assertThat(refused.err()).isIn("runjob: run " + runId + " is being queued again by another runjob submit --resume: nothing was done\n",
                "runjob: run " + runId + " is queued: it has not ended (runjob stop " + runId + " ends it)\n");
        assertThat(slurm.queue().lines()).as("one job queued for the run").hasSize(1);
        assertThat(resumed.out()).isEqualTo(runId + "\n");
        String second = queuedJobId("again", runId);
        assertThat(second).isNotEqualTo(first);
        Path folder = jobs.logs.resolve("again").resolve(runId);
        assertThat(resumed.err()).isEqualTo("runjob: run " + runId + " is queued again as slurm job " + second + ": it goes on as its next"
                + " attempt in " + folder + "; this machine may now go\n");
        Poll.until(() -> Cli.run(env, "status", runId).out().contains("succeeded (exit 0)"), Duration.ofSeconds(90),
                "the resumed run to succeed", () -> seen(runId, second, folder));
        assertThat(Files.readString(folder.resolve("rank-1.attempt-1.log"))).isEqualTo("rank 1 attempt 1 restarts 1\n");
        assertThat(folder.resolve("summary.until-attempt-0.json")).isRegularFile();
        assertThat(Files.readString(folder.resolve("queued.json"))).contains("\"earlier_job_ids\":[\"" + first + "\"]");
        Poll.until(this::queueEmpty, Duration.ofSeconds(30), "the resumed job to leave the queue");
        assertThat(jobState(second)).isEqualTo("COMPLETED");
    }

    /**
     * A submitted --requeue run of requeued.py (job {@code name}) requeued with {@code scontrol
     * requeue} while attempt 0 ran, once that attempt's ranks are gone: its run id and job id.
     */
    private String[] requeuedWhileRunning(String name) throws Exception {
        Path job = evenJob(name, "requeued.py", Map.of());
        Files.writeString(job, Files.readString(job) + "slurm: {alloc_args: [--requeue]}\n");
        String runId = submit(job);
        String jobId = queuedJobId(name, runId);
        List<Long> first = jobs.awaitPids(2, Duration.ofSeconds(90));
        assertThat(slurm.out("scontrol", "requeue", jobId)).isEmpty();
        Pids.awaitGone(first, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 5), "attempt 0's ranks");
        return new String[] {runId, jobId};
    }

    /** Waits for a requeued job to be back in the queue (PENDING). */
    private void awaitPending(String jobId) {
        Poll.until(() -> {
            try {
                return stateNow(jobId).equals("PENDING");
            } catch (Exception e) {
                return false;
            }
        }, Duration.ofSeconds(30), "the requeued job to wait in the queue");
    }

    /** A job array's task requeued while it runs reads requeued, then running, then succeeded: never interrupted or dead. */
    @Test
    void aRequeuedArrayTaskReadsRequeuedThenGoesOnToSucceed() throws Exception {
        Path job = jobs.job("arrayq", "  - {count: 1, workers: 1}\n", jobs.worker("requeued.py"), List.of("python3", "requeued.py"),
                "backend: slurm\nworkdir: " + dir.resolve("work") + "\nsweep: {n: [0]}\nslurm: {alloc_args: [--requeue]}\n", Map.of());
        Process p = RunjobProcess.start(dir, job, env, "submit");
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String err = RunjobProcess.stderrOf(dir, job);
        assertThat(p.exitValue()).as(err).isZero();
        Matcher m = Pattern.compile("runjob: sweep-\\S+ of job arrayq: 1 runs queued as slurm job array (\\d+) ").matcher(err);
        assertThat(m.find()).as(err).isTrue();
        String task = m.group(1) + "_0";
        String runId = Files.readString(dir.resolve(job.getFileName() + ".out")).strip();
        List<Long> first = jobs.awaitPids(1, Duration.ofSeconds(90));
        assertThat(slurm.out("scontrol", "requeue", task)).isEmpty();
        Pids.awaitGone(first, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 5), "attempt 0's rank");
        awaitPending(task);
        assertThat(Cli.run(env, "status", runId).out()).containsPattern("requeued \\(until \\S+\\)").doesNotContain("interrupted");
        assertThat(slurm.out("scontrol", "update", "JobId=" + task, "StartTime=now+3")).isEmpty();
        Path folder = jobs.logs.resolve("arrayq").resolve(runId);
        Set<String> seen = new LinkedHashSet<>();
        Poll.until(() -> {
            String status = Cli.run(env, "status", runId).out().lines().findFirst().orElse("");
            seen.add(status.replace(runId, "RUN").replaceAll("\\(until \\S+\\)", "(until T)").replaceAll(" for \\S+$", ""));
            return status.contains("succeeded (exit 0)");
        }, Duration.ofSeconds(150), "the requeued task to succeed", () -> seen(runId, task, folder));
        assertThat(seen).as("what status read through the requeue").noneMatch(s -> s.contains("interrupted") || s.contains("dead")
                || s.contains("failed") || s.contains("(None)") || s.contains("(exit 130)"));
        assertThat(Files.readString(folder.resolve("rank-0.attempt-1.log"))).isEqualTo("rank 0 attempt 1 restarts 1\n");
        Poll.until(this::queueEmpty, Duration.ofSeconds(30), "the task to leave the queue");
        assertThat(jobState(task)).isEqualTo("COMPLETED");
    }

    /** stop of a run in Slurm's requeue hold reaches it through scancel: it never starts again. */
    @Test
    void stopEndsARunInItsRequeueHold() throws Exception {
        String[] requeued = requeuedWhileRunning("held");
        String runId = requeued[0];
        String jobId = requeued[1];
        Poll.until(() -> Cli.run(env, "status", runId).out().contains("requeued (until "), Duration.ofSeconds(30), "the run to read requeued");
        Cli stop = Cli.run(env, "stop", runId);
        assertThat(stop.code()).as(stop.err()).isZero();
        assertThat(stop.err()).isEqualTo("runjob: run " + runId + " interrupted (exit 130)\n");
        assertThat(jobState(jobId)).isEqualTo("CANCELLED");
        Poll.until(this::queueEmpty, Duration.ofSeconds(30), "the cancelled job to leave the queue");
        Path folder = jobs.logs.resolve("held").resolve(runId);
        assertThat(folder.resolve("rank-0.attempt-1.log")).doesNotExist();
        assertThat(Cli.run(env, "status", runId).out()).contains("interrupted").doesNotContain("requeued");
    }

    /**
     * NODE_FAIL of a --requeue batch job whose nodes are a count: the failed node (not the batch
     * host) is quarantined with Slurm's cause, the requeued job is kept off it, and the run's next
     * attempt runs on the other two nodes, although Slurm returns the node to service at once.
     */
    @Test
    void aNodeFailureRequeuesTheRunOffTheFailedNode() throws Exception {
        String extra = "backend: slurm\nworkdir: " + dir.resolve("work") + "\nslurm: {alloc_args: [--requeue]}\n";
        Path job = jobs.job("nodefail", "  - {count: 2, workers: 1}\n", jobs.worker("requeued.py"), List.of("python3", "requeued.py"), extra,
                Map.of());
        String runId = submit(job);
        String jobId = queuedJobId("nodefail", runId);
        List<Long> first = jobs.awaitPids(2, Duration.ofSeconds(90));
        List<String> held = slurm.out("scontrol", "show", "hostnames", slurm.out("squeue", "-h", "-j", jobId, "-o", "%N").trim()).lines().toList();
        assertThat(held).hasSize(2);
        String failed = held.get(1);
        String other = List.of("h1", "h2", "h3").stream().filter(h -> !held.contains(h)).findFirst().orElseThrow();
        Path folder = jobs.logs.resolve("nodefail").resolve(runId);
        try {
            assertThat(slurm.out("scontrol", "update", "NodeName=" + failed, "State=DOWN", "Reason=test-node-failure")).isEmpty();
            Pids.awaitGone(first, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 5), "attempt 0's ranks");
            awaitPending(jobId);
            assertThat(slurm.out("scontrol", "-o", "show", "job", jobId)).contains(" ExcNodeList=" + failed + " ");
            assertThat(slurm.out("scontrol", "update", "JobId=" + jobId, "StartTime=now+3")).isEmpty();
            Poll.until(() -> Cli.run(env, "status", runId).out().contains("succeeded (exit 0)"), Duration.ofSeconds(150),
                    "the requeued run to succeed", () -> seen(runId, jobId, folder));
        } finally {
            slurm.out("scontrol", "update", "NodeName=" + failed, "State=RESUME");
        }
        String cause = "Slurm job " + jobId + " lost node " + failed + " (node failure) and requeued it (restart 1)";
        List<JsonNode> events = Files.readString(folder.resolve("events.jsonl")).lines().map(l -> JsonMapper.builder().build().readTree(l)).toList();
        JsonNode end0 = events.stream().filter(e -> e.path("event").asString().equals("attempt_end") && e.path("attempt").asInt() == 0)
                .findFirst().orElseThrow();
        assertThat(end0.path("result").asString()).isEqualTo("interrupted");
        assertThat(end0.path("interrupted_by").asString()).isEqualTo(cause);
        assertThat(events.stream().filter(e -> e.path("event").asString().equals("quarantine")).map(e -> e.path("node").asString() + ": "
                + e.path("reason").asString()).toList()).containsExactly(failed + ": lost: " + cause);
        assertThat(events.stream().filter(e -> e.path("event").asString().equals("keep_off")).map(e -> e.path("machines").toString()).toList())
                .containsExactly("[\"slurm:" + failed + "\"]");
        JsonNode start1 = events.stream().filter(e -> e.path("event").asString().equals("attempt_start") && e.path("attempt").asInt() == 1)
                .findFirst().orElseThrow();
        assertThat(start1.path("nodes").toString()).isEqualTo("[\"" + held.get(0) + "\",\"" + other + "\"]");
        assertThat(Files.readString(folder.resolve("rank-1.attempt-1.log"))).isEqualTo("rank 1 attempt 1 restarts 1\n");
        String batch = Files.readString(folder.resolve("slurm-" + jobId + ".out"));
        assertThat(batch).contains("runjob: " + cause + "\n").contains("runjob: the requeued job keeps off slurm:" + failed + " (quarantined)\n")
                .contains("interrupted (" + cause + "): every worker was stopped");
        Cli nodes = Cli.run(env, "nodes");
        assertThat(nodes.out()).containsPattern(failed + " +slurm:" + failed + " .*" + runId + " +lost: " + Pattern.quote(cause));
        Poll.until(this::queueEmpty, Duration.ofSeconds(30), "the batch job to leave the queue");
        assertThat(jobState(jobId)).isEqualTo("COMPLETED");
        // the quarantine keeps the next submitted run off it too, from its first start
        String next = submit(job);
        String nextJob = queuedJobId("nodefail", next);
        assertThat(slurm.out("scontrol", "-o", "show", "job", nextJob)).contains(" ExcNodeList=" + failed + " ");
        cancel(nextJob);
    }

    @Test
    void eachWorkerGetsTheCpusTheJobAsksFor() throws Exception {
        Path job = evenJob("cpus", "cpus.py", Map.of());
        Cli plain = run(job);
        assertThat(plain.code()).as(plain.err()).isZero();
        assertThat(plain.out()).contains("[h1/0] rank 0 cpus 1\n").contains("[h2/1] rank 1 cpus 1\n");
        Cli more = run(job, "--set", "slurm.cpus_per_worker=2");
        assertThat(more.code()).as(more.err()).isZero();
        assertThat(more.out()).contains("[h1/0] rank 0 cpus 2\n").contains("[h2/1] rank 1 cpus 2\n");
    }

    @Test
    void aCancelFromOutsideIsNamedAndNeverRestartedInto() throws Exception {
        Path job = evenJob("cancelled", "sleeper.py", Map.of());
        var run = CompletableFuture.supplyAsync(() -> run(job, "--set", "failure.max_restarts=2"));
        List<Long> ranks = jobs.awaitPids(2, Duration.ofSeconds(60));
        String jobId = slurm.queue().lines().filter(l -> l.endsWith(" runjob-cancelled")).findFirst().orElseThrow().split(" ")[0];
        slurm.out("scancel", jobId);
        Cli r = run.get(120, TimeUnit.SECONDS);
        assertThat(r.code()).as(r.err()).isEqualTo(1);
        String gone = "Slurm job " + jobId + " was cancelled from outside runjob (scancel) (CANCELLED)";
        assertThat(r.err()).contains("\nthe nodes are gone: " + gone + "\nroot cause: ").contains(" failed in ").doesNotContain("attempts");
        Path folder = jobs.logs.resolve("cancelled").resolve(Cli.RUN_ID);
        assertThat(Files.readString(folder.resolve("runjob.log"))).contains(gone + ": no restart can use its nodes").doesNotContain("restarting");
        assertThat(JsonMapper.builder().build().readTree(Files.readString(folder.resolve("summary.json"))).path("nodes_gone").asString())
                .isEqualTo(gone);
        Pids.awaitGone(ranks, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 5), "the ranks of the cancelled job");
    }

    /**
     * A plain scancel of a running submitted run: the run reads cancelled, never "lost node", and
     * nothing is quarantined. (Slurm drops a cancelled job's nodes from its record one by one while
     * it reads COMPLETING, most often on a busy machine: SlurmEventsTest has those records. No load
     * is made here: beside the other test streams it would slow their timing tests.)
     */
    @Test
    void aPlainScancelOfASubmittedRunIsACancelNotALostNode() throws Exception {
        Path job = evenJob("scancelled", "sleeper.py", Map.of());
        String runId = submit(job);
        String jobId = queuedJobId("scancelled", runId);
        List<Long> ranks = jobs.awaitPids(2, Duration.ofSeconds(60));
        Path folder = jobs.logs.resolve("scancelled").resolve(runId);
        cancel(jobId);
        Poll.until(() -> Files.isRegularFile(folder.resolve("summary.json")), Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 60),
                "the cancelled run's summary");
        JsonNode summary = JsonMapper.builder().build().readTree(Files.readString(folder.resolve("summary.json")));
        String batchOut = Files.readString(folder.resolve("slurm-" + jobId + ".out"));
        // CANCELLED once the record shows it; COMPLETING (no node failed, no requeue) while the batch step still runs
        assertThat(summary.path("interrupted_by").asString()).as("%s%n%s", summary, batchOut).startsWith("Slurm job " + jobId
                + " was cancelled from outside runjob (scancel) (");
        assertThat(batchOut).doesNotContain("lost node").doesNotContain("quarantined");
        assertThat(Cli.run(env, "nodes").out()).isEqualTo("no node is quarantined\n");
        Pids.awaitGone(ranks, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 5), "the ranks of the cancelled run");
        Poll.until(this::queueEmpty, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 10), "the queue to empty after the cancel");
    }

    /** The run's status, the job's record and the batch step's output, for a wait's timeout message. */
    private String seen(String runId, String jobId, Path folder) {
        StringBuilder out = new StringBuilder(Cli.run(env, "status", runId).out());
        try {
            out.append(slurm.out("scontrol", "-o", "show", "job", jobId)).append('\n');
            Path batch = folder.resolve("slurm-" + jobId + ".out");
            if (Files.isRegularFile(batch)) {
                out.append(Files.readString(batch));
            }
        } catch (Exception e) {
            out.append(e);
        }
        return out.toString();
    }

    /** sbatch --parsable ARGS: the job id. */
    private String sbatch(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("sbatch", "--parsable"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes()).strip();
        assertThat(p.waitFor()).as(out).isZero();
        return out.split(";")[0];
    }

    @Test
    void stopEndsAQueuedRunThroughSlurmAndItReadsInterrupted() throws Exception {
        Path job = evenJob("queuedstop", "sleeper.py", Map.of());
        String runId = submit(job);
        List<Long> ranks = jobs.awaitPids(2, Duration.ofSeconds(90));
        Cli stop = Cli.run(env, "stop", runId);
        assertThat(stop.code()).as(stop.err()).isZero();
        assertThat(stop.err()).isEqualTo("runjob: run " + runId + " interrupted (exit 130)\n");
        Pids.awaitGone(ranks, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 5), "the ranks of the stopped run");
        Poll.until(this::queueEmpty, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 10), "the queue to empty after stop");
        // Slurm's record says what happened: a stop, not a failure with runjob's exit code 130
        String jobId = queuedJobId("queuedstop", runId);
        assertThat(jobState(jobId)).isEqualTo("CANCELLED");
        assertThat(Files.readString(jobs.logs.resolve("queuedstop").resolve(runId).resolve("slurm-" + jobId + ".out")))
                .contains("runjob: Slurm job " + jobId + " is cancelled: the run was stopped\n");
        assertThat(Cli.run(env, "status", runId).out()).startsWith("run " + runId + " of job queuedstop: interrupted (exit 130)");
    }

    @Test
    void aQueuedRunShowsWhyItWaitsAndStopWithdrawsIt() throws Exception {
        allocate("--job-name=blocker", "--nodelist=h1", "--exclusive");
        Path job = evenJob("pending", "sleeper.py", Map.of());
        String runId = submit(job);
        Poll.until(() -> Cli.run(env, "status", runId).out().startsWith("run " + runId + " of job pending: queued ("),
                Duration.ofSeconds(30), "status to show the pending reason");
        assertThat(Cli.run(env, "runs").out()).containsPattern(runId + " +pending +queued \\(");
        // logs -f of a queued run says where it stands while nothing is printed yet, and ends when it is withdrawn
        Process follow = RunjobProcess.start(dir, "follow", env, List.of("logs", "-f"), Path.of(runId), List.of());
        running.add(follow);
        Poll.until(() -> read(dir.resolve("follow.err")).contains("runjob: run " + runId + " is queued ("), Duration.ofSeconds(30),
                "logs -f to say the run is queued");
        Cli stop = Cli.run(env, "stop", runId);
        assertThat(stop.code()).as(stop.err()).isZero();
        assertThat(stop.err()).isEqualTo("runjob: run " + runId + " withdrawn\n");
        assertThat(follow.waitFor(30, TimeUnit.SECONDS)).as("logs -f ends with the run").isTrue();
        assertThat(follow.exitValue()).isEqualTo(130);
        // one line each time the pending reason changes, then the end
        assertThat(read(dir.resolve("follow.err"))).matches("(runjob: run " + runId + " is queued \\(\\w+\\) in its scheduler's queue\n)+"
                + "runjob: run " + runId + " was withdrawn from its scheduler's queue before it started");
        assertThat(read(dir.resolve("follow.out"))).isEmpty();
        assertThat(slurm.queue()).doesNotContain("runjob-pending").contains("RUNNING blocker");
        slurm.queue().lines().filter(l -> l.contains("blocker")).forEach(l -> cancel(l.split(" ")[0]));
    }

    @Test
    void slurmsOwnWordsReachTheUserWhenItRefusesTheAllocation() throws Exception {
        Path job = evenJob("refused", "ticks.py", Map.of());
        // salloc rejects --requeue with no "error" in its words: it said only "exited 255" before
        Cli r = run(job, "--set", "slurm.alloc_args=[--requeue]");
        assertThat(r.code()).isEqualTo(3);
        assertThat(r.err()).contains("FAIL h1 slurm: Slurm refused the allocation: unrecognized option '--requeue'; "
                + "Try \"salloc --help\" for more information (salloc exited 255)\n");
        Cli bad = run(job, "--set", "slurm.alloc_args=[--constraint=nosuchfeature]");
        assertThat(bad.code()).isEqualTo(3);
        assertThat(bad.err()).contains("Slurm refused the allocation: ").contains("Invalid feature specification");
    }

    @Test
    void insideTheUsersAllocationItsStepsGoThereAndItIsNeverCancelled() throws Exception {
        Path job = job("inside", jobs.worker("ticks.py"), List.of("python3", "ticks.py"), "", Map.of("TICKS", "40"));
        // runjob as the command of the user's own salloc: SLURM_JOB_ID is set
        List<String> cmd = new ArrayList<>(List.of("salloc", "--job-name=users-own", "--nodes=2", "--nodelist=h1,h2", "--ntasks-per-node=2"));
        cmd.addAll(RunjobJvm.command(List.of(job.toString())));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(dir.resolve("inside.out").toFile()).redirectError(dir.resolve("inside.err").toFile());
        pb.environment().putAll(env);
        Process salloc = pb.start();
        running.add(salloc);
        jobs.awaitPids(3, Duration.ofSeconds(60));
        String queue = slurm.queue();
        assertThat(queue.lines().toList()).as("exactly one job: the user's").hasSize(1).allMatch(l -> l.contains("users-own"));
        String jobId = queue.split(" ")[0];
        assertThat(salloc.waitFor(90, TimeUnit.SECONDS)).isTrue();
        assertThat(salloc.exitValue()).as(Files.readString(dir.resolve("inside.err"))).isZero();
        assertThat(Files.readString(dir.resolve("inside.out")).lines().filter(l -> l.matches(".*rank \\d tick \\d+")).count()).isEqualTo(3 * 40);
        // the steps were runjob's, named; the job ended as its owner's command did: COMPLETED, never CANCELLED
        // (COMPLETING while Slurm ends the allocation after salloc exits)
        String[] shown = {""};
        Poll.until(() -> {
            try {
                shown[0] = slurm.out("scontrol", "show", "job", jobId);
            } catch (IOException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
            return !shown[0].contains("JobState=COMPLETING");
        }, Duration.ofSeconds(30), "job " + jobId + " to leave COMPLETING", () -> shown[0]);
        assertThat(shown[0]).contains("JobState=COMPLETED");
    }

    @Test
    void ctrlCEndsTheRunAndReleasesTheAllocation() throws Exception {
        Path job = job("interrupt", jobs.worker("sleeper.py"), List.of("python3", "sleeper.py"), "", Map.of());
        Process p = RunjobProcess.start(dir, job, env);
        running.add(p);
        List<Long> ranks = jobs.awaitPids(3, Duration.ofSeconds(90));
        assertThat(slurm.queue()).contains("RUNNING runjob-interrupt");
        new ProcessBuilder("kill", "-INT", Long.toString(p.pid())).start().waitFor();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(RunjobProcess.stderrOf(dir, job)).isEqualTo(130);
        Pids.awaitGone(ranks, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 5), "the ranks after Ctrl-C");
        Poll.until(this::queueEmpty, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 5), "squeue empty after Ctrl-C");
        Poll.until(this::noTasks, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 5), "no step task left after Ctrl-C");
    }

    @Test
    void ctrlCWhileTheAllocationWaitsInTheQueueWithdrawsIt() throws Exception {
        allocate("--job-name=blocker", "--nodelist=h1", "--exclusive");
        Path job = job("queued", jobs.worker("sleeper.py"), List.of("python3", "sleeper.py"), "", Map.of());
        Process p = RunjobProcess.start(dir, job, env);
        running.add(p);
        Poll.until(() -> queueHas("PENDING runjob-queued"), Duration.ofSeconds(60), "runjob's allocation pending behind the blocker");
        Poll.until(() -> read(dir.resolve(job.getFileName() + ".err")).contains("queued and waiting for resources (Ctrl-C withdraws it)"),
                Duration.ofSeconds(30), "runjob to say it waits");
        new ProcessBuilder("kill", "-INT", Long.toString(p.pid())).start().waitFor();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        String err = RunjobProcess.stderrOf(dir, job);
        assertThat(p.exitValue()).as(err).isEqualTo(130);
        assertThat(err).contains("interrupted while waiting for the Slurm allocation (job ").contains("nothing was started");
        Poll.until(() -> !queueHas("runjob-queued"), Duration.ofSeconds(10), "the withdrawn request gone from the queue");
        assertThat(slurm.queue()).contains("RUNNING blocker");
        slurm.queue().lines().filter(l -> l.contains("blocker")).forEach(l -> cancel(l.split(" ")[0]));
    }

    /** Another user's job: {@code salloc --no-shell ARGS}, granted. */
    private void allocate(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("salloc", "--no-shell"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(slurm.env());
        Process p = pb.start();
        p.getOutputStream().close();
        assertThat(new String(p.getInputStream().readAllBytes())).contains("Granted job allocation");
    }

    private boolean queueHas(String text) {
        try {
            return slurm.queue().contains(text);
        } catch (Exception e) {
            return false;
        }
    }

    @Test
    void runjobKilledWithSigkillLeavesNothingInSlurm() throws Exception {
        Path job = job("killed", jobs.worker("sleeper.py"), List.of("python3", "sleeper.py"), "", Map.of());
        Process p = RunjobProcess.start(dir, job, env);
        running.add(p);
        List<Long> ranks = jobs.awaitPids(3, Duration.ofSeconds(90));
        p.destroyForcibly();
        Pids.awaitGone(ranks, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 5), "the ranks after runjob's SIGKILL");
        Poll.until(this::queueEmpty, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 5), "squeue empty after runjob's SIGKILL");
        Poll.until(this::noTasks, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 5), "no step task left after runjob's SIGKILL");
    }

    /** kill -9 of each process runjob owns under Slurm, one at a time: the srun of a node's step, and that node's agent; neither costs the node. */
    @Test
    void aKilledStepOrAgentFailsTheRunAndLeavesNothing() throws Exception {
        for (String victim : List.of("srun", "agent")) {
            Files.list(jobs.pids).forEach(f -> f.toFile().delete());
            Path job = job("kill-" + victim, jobs.worker("sleeper.py"), List.of("python3", "sleeper.py"), "failure: {grace_period_s: 1}\n",
                    Map.of());
            Process p = RunjobProcess.start(dir, job, env);
            running.add(p);
            List<Long> ranks = jobs.awaitPids(3, Duration.ofSeconds(90));
            long pid = victim.equals("agent") ? Pids.parentOf(ranks.get(2)) : stepOf(p, "h2");
            ProcessHandle.of(pid).orElseThrow().destroyForcibly();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).as(victim).isTrue();
            String err = RunjobProcess.stderrOf(dir, job);
            assertThat(p.exitValue()).as(err).isEqualTo(1);
            assertThat(err).as(victim).contains("node h2");
            // a killed step or agent is no evidence about the machine: a fresh step reaches it, so it is not quarantined
            assertThat(err).as(victim).contains("runjob: node h2: its agent failed (").contains("but the node answers on a fresh connection: it is not lost\n")
                    .doesNotContain("quarantined");
            assertThat(Cli.run(env, "nodes").out()).as(victim).isEqualTo("no node is quarantined\n");
            Pids.awaitGone(ranks, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 5), "the ranks after kill -9 of the " + victim);
            Poll.until(this::queueEmpty, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 5), "squeue empty after kill -9 of the " + victim);
            Poll.until(this::noTasks, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 5), "no step task left after kill -9 of the " + victim);
        }
    }

    @Test
    void aDetachedRunHoldsItsAllocationUntilStopped() throws Exception {
        Path job = job("detached", jobs.worker("sleeper.py"), List.of("python3", "sleeper.py"), "", Map.of());
        Cli detach = run(job, "--detach");
        assertThat(detach.code()).as(detach.err()).isZero();
        jobs.awaitPids(3, Duration.ofSeconds(90));
        assertThat(slurm.queue()).contains("RUNNING runjob-detached");
        String id = Files.list(jobs.logs.resolve("detached")).findFirst().orElseThrow().getFileName().toString();
        Cli stop = Cli.run(env, "stop", id, "--logs-dir", jobs.logs.toString());
        assertThat(stop.code()).as(stop.err()).isZero();
        Poll.until(this::queueEmpty, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 10), "squeue empty after runjob stop");
        Poll.until(this::noTasks, Duration.ofSeconds(SlurmTestbed.KILL_WAIT_S + 5), "no step task left after runjob stop");
        Poll.until(() -> Cli.run(env, "status", id, "--logs-dir", jobs.logs.toString()).out().contains("interrupted"),
                Duration.ofSeconds(30), "status says interrupted");
    }

    @Test
    void gpusAreCountsAndTheOnesSlurmGaveAreRecorded() throws Exception {
        // another job holds GPU 0 of h2: Slurm gives this run's h2 step GPU 1 (ConstrainDevices=no keeps physical indices)
        allocate("--job-name=holder", "--nodelist=h2", "--gpus-per-node=1");
        String show = "sh, -c, 'echo rank $RANK cvd $CUDA_VISIBLE_DEVICES'";
        String nodes = "  - {name: h1, gpus: [0, 1], workers: 2}\n  - {name: h2, gpus: [3]}\n";
        Path job = jobs.job("gpus", nodes, List.of(), List.of(show), "backend: slurm\nworkdir: " + dir.resolve("work") + "\n", Map.of());
        Cli r = run(job);
        slurm.queue().lines().filter(l -> l.contains("holder")).forEach(l -> cancel(l.split(" ")[0]));
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.err()).contains("note: node h2: Slurm chooses the GPUs, so gpus [3] asks for 1");
        assertThat(r.out().lines().sorted().toList()).containsExactly("[h1/0] rank 0 cvd 0,1", "[h1/1] rank 1 cvd 0,1", "[h2/2] rank 2 cvd 1");
        Path run = Files.list(jobs.logs.resolve("gpus")).findFirst().orElseThrow();
        String summary = Files.readString(run.resolve("summary.json"));
        assertThat(summary).contains("\"job_id\"").contains("GPU given by Slurm (physical 1)").contains("GPU given by Slurm (physical 0)");
        String preflight = Files.readString(run.resolve("preflight.json"));
        assertThat(preflight).contains("CUDA_VISIBLE_DEVICES=1 (SLURM_STEP_GPUS=1)").contains("CUDA_VISIBLE_DEVICES=0,1 (SLURM_STEP_GPUS=0,1)");
    }

    /** gpu_bind: worker on the GPUs Slurm gives a node's step: each rank sees its own one, in local-rank order. */
    @Test
    void gpuBindWorkerGivesEachRankItsOwnShareOfTheStepsGpus() throws Exception {
        String show = "sh, -c, 'echo rank $RANK local $LOCAL_RANK cvd $CUDA_VISIBLE_DEVICES'";
        Path job = jobs.job("bound", "  - {name: h1, gpus: all}\n  - {name: h2, gpus: {count: 2}, workers: 1}\n", List.of(), List.of(show),
                "backend: slurm\nworkdir: " + dir.resolve("work") + "\ngpu_bind: worker\n", Map.of());
        Cli r = run(job);
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out().lines().filter(l -> l.contains(" rank ")).sorted().toList())
                .containsExactly("[h1/0] rank 0 local 0 cvd 0", "[h1/1] rank 1 local 1 cvd 1", "[h2/2] rank 2 local 0 cvd 0,1");
    }

    /** gpus: all of a named node, submitted: sbatch asks for the GPUs Slurm has for it (Gres=gpu:2), one worker each. */
    @Test
    void submitAsksSlurmHowManyGpusANamedNodeHasForGpusAll() throws Exception {
        String show = "sh, -c, 'echo rank $RANK of $WORLD_SIZE'";
        String extra = "backend: slurm\nworkdir: " + dir.resolve("work") + "\n";
        Path all = jobs.job("allgpus", "  - {name: h1, gpus: all}\n", List.of(), List.of(show), extra, Map.of());
        Cli dry = Cli.run(env, "submit", "--dry-run", all.toString());
        assertThat(dry.code()).as(dry.err()).isZero();
        assertThat(dry.out()).contains(" --nodelist=h1 --nodes=1 --ntasks-per-node=2 --gpus-per-node=2 ");
        String runId = submit(all);
        Poll.until(() -> Cli.run(env, "status", runId).out().contains("succeeded (exit 0)"), Duration.ofSeconds(90), "the run to succeed");
        assertThat(Files.readString(jobs.logs.resolve("allgpus").resolve(runId).resolve("all.log")).lines().filter(l -> l.contains(" rank "))
                .sorted().toList()).containsExactly("[h1/0] rank 0 of 2", "[h1/1] rank 1 of 2");
        // nodes given as a count: which nodes, and so how many GPUs, is known only once Slurm picks them
        Path counted = jobs.job("allcounted", "  - {count: 1, gpus: all}\n", List.of(), List.of(show), extra, Map.of());
        Cli refused = Cli.run(env, "submit", counted.toString());
        assertThat(refused.code()).as(refused.err()).isEqualTo(2);
        assertThat(refused.err()).isEqualTo(counted + ":3:22: /nodes/0/gpus: nodes given as a count need their GPUs as a number,"
                + " e.g. gpus: {count: 8}: Slurm allocates that many on each\n" + counted + ": 1 problem\n");
        assertThat(jobs.logs.resolve("allcounted")).doesNotExist();
        Poll.until(this::queueEmpty, Duration.ofSeconds(30), "the batch job to leave the queue");
    }

    /** Inside the user's allocation of 2 GPUs a node, the job file's count decides: its step gets that many, and too many is refused by name. */
    @Test
    void insideAnAllocationTheJobFilesGpuCountDecidesTheWorkers() throws Exception {
        String show = "sh, -c, 'echo rank $RANK of $WORLD_SIZE cvd $CUDA_VISIBLE_DEVICES'";
        String extra = "backend: slurm\nworkdir: " + dir.resolve("work") + "\n";
        Path one = jobs.job("onegpu", "  - {name: h1, gpus: {count: 1}}\n", List.of(), List.of(show), extra, Map.of());
        assertThat(insideSalloc("onegpu", one, "--nodes=1", "--nodelist=h1", "--gpus-per-node=2")).as(read(dir.resolve("onegpu.err"))).isZero();
        assertThat(Files.readString(dir.resolve("onegpu.out")).lines().filter(l -> l.contains(" rank ")).toList())
                .containsExactly("[h1/0] rank 0 of 1 cvd 0");
        Path three = jobs.job("threegpus", "  - {name: h1, gpus: {count: 3}}\n", List.of(), List.of(show), extra, Map.of());
        assertThat(insideSalloc("threegpus", three, "--nodes=1", "--nodelist=h1", "--gpus-per-node=2")).as(read(dir.resolve("threegpus.err")))
                .isEqualTo(3);
        // srun names both numbers
        assertThat(read(dir.resolve("threegpus.err"))).contains("FAIL h1 java: the agent did not start: the node closed the channel before the"
                + " agent started; its stderr said: srun: error: Step requested gres_per_node=gpu:3 is more than the job's gres_per_node=gpu:2;"
                + " srun: error: Unable to create step for job ").contains(": Invalid generic resource (gres) specification");
        assertThat(Files.readString(dir.resolve("threegpus.out"))).doesNotContain(" rank ");
    }

    @Test
    void anUnknownNodeIsNamedAndNothingIsAllocated() throws Exception {
        String nodes = "  - {name: h1, workers: 1}\n  - {name: h9, workers: 1}\n";
        Path job = jobs.job("unknown", nodes, List.of(), List.of("'true'"), "backend: slurm\nworkdir: " + dir.resolve("work") + "\n", Map.of());
        Cli r = run(job);
        assertThat(r.code()).as(r.err()).isEqualTo(3);
        assertThat(r.err()).contains("Slurm has no node named 'h9'");
        assertThat(slurm.queue()).isEmpty();
    }

    private boolean queueEmpty() {
        try {
            return slurm.queue().isEmpty();
        } catch (Exception e) {
            return false;
        }
    }

    private boolean noTasks() {
        try {
            return slurm.tasks().isEmpty();
        } catch (Exception e) {
            return false;
        }
    }

    /** {@code scancel WHAT}: a job id, or --user=root for every job. */
    private void cancel(String jobId) {
        try {
            ProcessBuilder pb = new ProcessBuilder("scancel", jobId);
            pb.environment().putAll(slurm.env());
            pb.start().waitFor();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String read(Path p) {
        try {
            return Files.readString(p).trim();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
