package org.runjob.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.runjob.run.ExitCode;
import org.runjob.testbed.FakeCuda;
import org.runjob.testbed.Leftovers;
import org.runjob.testbed.Poll;
import org.runjob.testbed.RunjobProcess;

/**
 * Each run works in a directory of its own (no workdir set): many runs of one job at once on one
 * machine, each on GPUs of its own, with its own arguments and its own version of the job's
 * files; a run that finds no free GPU waits for one; a new run never resumes an earlier run's
 * checkpoint, and {@code runjob resume} continues a run in its directory as its next attempt.
 */
class RunDirectoryTest {

    @TempDir
    Path tmp;

    @RegisterExtension
    final Leftovers toClean = new Leftovers();

    /**
     * VERSION of the worker script: it writes its arguments to a file in its current directory,
     * marks itself up, waits for GO (so every run is up at once), then prints what it reads back.
     */
    private Path script(String version) throws IOException {
        Path dir = Files.createDirectories(tmp.resolve(version));
        return Files.writeString(dir.resolve("step.sh"), "echo \"$*\" > mine.txt\n"
                + "echo $CUDA_VISIBLE_DEVICES > \"$MARKS/$RUNJOB_RUN_ID\"\n"
                + "i=0; while [ ! -e \"$MARKS/go\" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n"
                + "echo \"" + version + " args $(cat mine.txt) gpu $CUDA_VISIBLE_DEVICES in $(pwd)\"\n");
    }

    /** Job "sweep" with no workdir (HOME is the test's), one worker on one free GPU, running {@code script}. */
    private Path job(String file, Path script) throws IOException {
        return Files.writeString(tmp.resolve(file), "name: sweep\nnodes:\n  - {name: box, local: true, gpus: {count: 1}}\n"
                + "files: [" + script + "]\nentrypoint: {command: [sh, step.sh]}\n"
                + "failure: {grace_period_s: 1}\nlogs: {dir: " + tmp.resolve("runs") + "}\n");
    }

    @Test
    void runsOfOneJobAtOnceEachWorkInTheirOwnDirectoryOnTheirOwnGpu() throws Exception {
        Map<String, String> env = env(GpuLeaseTest.IDLE); // 4 idle GPUs
        env.put("MARKS", Files.createDirectories(tmp.resolve("marks")).toString());
        Path v1 = job("v1.yaml", script("v1"));
        Path v2 = job("v2.yaml", script("v2"));
        // three runs of v1 with their own arguments, one of v2 (the same file name, other bytes), and a fifth that waits for a GPU
        Map<String, Process> runs = new LinkedHashMap<>();
        runs.put("lr0.1", start("lr0.1", env, List.of(), v1, List.of("--lr", "0.1")));
        runs.put("lr0.01", start("lr0.01", env, List.of(), v1, List.of("--lr", "0.01")));
        runs.put("lr0.001", start("lr0.001", env, List.of(), v1, List.of("--lr", "0.001")));
        runs.put("v2", start("v2", env, List.of(), v2, List.of("--lr", "0.5")));
        Poll.until(() -> marks() == 4, Duration.ofSeconds(90), "four runs up at once");
        runs.put("waits", start("waits", env, List.of("--wait-for-gpus", "90s"), v1, List.of("--lr", "7")));
        Poll.until(() -> stderr("waits").contains("waiting for free GPUs"), Duration.ofSeconds(60), "the fifth run to wait for a GPU");
        Files.createFile(tmp.resolve("marks/go"));

        Set<String> gpus = new HashSet<>();
        Set<String> dirs = new HashSet<>();
        Path waited = null;
        Path base = tmp.resolve("home/.runjob/sweep");
        for (var run : runs.entrySet()) {
            Process p = run.getValue();
            assertThat(p.waitFor(120, TimeUnit.SECONDS)).as(run.getKey() + " ends").isTrue();
            assertThat(p.exitValue()).as(run.getKey() + ": " + stderr(run.getKey())).isZero();
            List<String> out = Files.readAllLines(tmp.resolve(run.getKey() + ".out"));
            assertThat(out).hasSize(1);
            String version = run.getKey().equals("v2") ? "v2" : "v1";
            String args = run.getKey().equals("v2") ? "--lr 0.5" : run.getKey().equals("waits") ? "--lr 7" : "--lr " + run.getKey().substring(2);
            assertThat(out.get(0)).matches("\\[box/0] " + version + " args " + args + " gpu [0-3] in " + base + "/runs/\\d{8}-\\d{6}-[0-9a-f]{4}");
            if (!run.getKey().equals("waits")) {
                gpus.add(out.get(0).replaceAll(".* gpu (\\d) in .*", "$1"));
            }
            String dir = out.get(0).replaceAll(".* in ", "");
            dirs.add(dir);
            if (run.getKey().equals("waits")) {
                waited = Path.of(dir);
            }
            // status names where the run works
            String runId = Path.of(dir).getFileName().toString();
            Cli status = Cli.run(env, "status", runId, "--logs-dir", tmp.resolve("runs").toString());
            assertThat(status.out()).endsWith("\nworkdir ~/.runjob/sweep/runs/" + runId + " (on node box)\n");
        }
        assertThat(gpus).as("the four runs at once had a GPU each").hasSize(4);
        assertThat(dirs).as("every run had a directory of its own").hasSize(5);
        // each version of step.sh is stored once, as a hard link of the file of the run that received it last; the fifth run,
        // started after the others, gets a verified copy of its own: what a worker writes to it reaches no other run
        Path fifth = waited;
        try (var stored = Files.list(base.resolve(".runjob/files"))) {
            List<Path> copies = stored.toList();
            assertThat(copies).hasSize(2);
            for (Path c : copies) {
                assertThat(Files.isSameFile(c, fifth.resolve("step.sh"))).as("the fifth run's step.sh is its own").isFalse();
                assertThat(Files.getAttribute(c, "unix:nlink")).as(c + ": the store and the run that received it").isEqualTo(2);
            }
            assertThat(copies.stream().filter(c -> {
                try {
                    return Files.mismatch(c, fifth.resolve("step.sh")) == -1;
                } catch (IOException e) {
                    return false;
                }
            }).count()).as("the fifth run's step.sh has the bytes of one stored copy").isEqualTo(1);
        }
    }

    @Test
    void aSweepOfThreeOnTwoGpusRunsEachPointAsARunOfItsOwnAndEndsWithOneTable() throws Exception {
        Map<String, String> env = env("Tesla V100-PCIE-16GB|16384|0|7.0|0000:01:00;Tesla V100-PCIE-16GB|16384|0|7.0|0000:02:00");
        Cli dry = Cli.runNow(env, "--dry-run", "jobs/sweep.yaml", "--", "--steps", "5");
        assertThat(dry.code()).as(dry.err()).isZero();
        assertThat(dry.out()).startsWith("sweep of job sweep: 3 runs (lr: 3)\n"
                + "    1  lr=0.1  python3 train.py --lr 0.1 --steps 5\n"
                + "    2  lr=0.01  python3 train.py --lr 0.01 --steps 5\n"
                + "    3  lr=0.001  python3 train.py --lr 0.001 --steps 5\n");

        Path logs = tmp.resolve("runs");
        Cli sweep = Cli.runNow(env, "--set", "logs.dir=" + logs, "--set", "env.STEP_SECONDS=0.3", "jobs/sweep.yaml", "--", "--steps", "5");
        assertThat(sweep.code()).as(sweep.out() + sweep.err()).isZero();
        List<String> table = sweep.out().lines().toList();
        assertThat(table).hasSize(4);
        assertThat(table.get(0)).matches("#\\s+run\\s+lr\\s+result\\s+exit\\s+duration\\s+last line");
        List<String> lrs = List.of("0.1", "0.01", "0.001");
        List<String> losses = List.of("2.68435", "20.4268", "24.5045");
        for (int i = 0; i < 3; i++) {
            assertThat(table.get(i + 1)).matches((i + 1) + "\\s+\\d{8}-\\d{6}-[0-9a-f]{4}\\s+" + lrs.get(i).replace(".", "\\.")
                    + "\\s+succeeded\\s+0\\s+[\\d.]+s\\s+lr " + lrs.get(i).replace(".", "\\.") + " on GPU [01]: loss " + losses.get(i)
                    + " after 5 steps");
        }
        try (var runs = Files.list(logs.resolve("sweep"))) {
            List<Path> folders = runs.sorted().toList();
            assertThat(folders).hasSize(3);
            List<String> swept = new ArrayList<>();
            for (Path f : folders) {
                String summary = Files.readString(f.resolve("summary.json"));
                assertThat(summary).contains("\"exit_code\" : 0");
                swept.add(summary.replaceAll("(?s).*\"sweep\" : \\{\\s*\"lr\" : \"([0-9.]+)\"\\s*}.*", "$1"));
            }
            assertThat(swept).containsExactlyInAnyOrderElementsOf(lrs);
        }
        // runs: the sweep's line, then its runs in grid order, each with its values
        List<String> listed = Cli.runNow(env, "runs", "--logs-dir", logs.toString()).out().lines().toList();
        assertThat(listed).hasSize(5);
        assertThat(listed.get(1)).matches("(sweep-\\d{8}-\\d{6}-[0-9a-f]{4}) of job sweep: 3 runs \\(runjob stop \\1 stops them all\\)");
        for (int i = 0; i < 3; i++) {
            assertThat(listed.get(i + 2)).matches("\\d{8}-\\d{6}-[0-9a-f]{4}\\s+sweep\\s+succeeded\\s+.*\\s0\\s+\\S+\\s+lr=" + lrs.get(i).replace(".", "\\."));
        }

        // ${sweep.NAME} in --set values, a sweep overridden by --set, one run at a time; a failed run fails the sweep
        // and the job names its metric line: the table shows the metric (the regex's group), summary.json has it
        Cli failing = Cli.runNow(env, "--set", "logs.dir=" + tmp.resolve("runs2"), "--set", "env.STEP_SECONDS=0", "--set", "sweep.lr=[0.5]",
                "--set", "sweep.fail=[-1, 2]", "--set", "env.FAIL_AT_STEP=${sweep.fail}", "--set", "logs.metric='loss ([0-9.]+) after'",
                "--max-parallel", "1", "jobs/sweep.yaml");
        assertThat(failing.code()).as(failing.out() + failing.err()).isEqualTo(ExitCode.WORKER_FAILED);
        List<String> rows = failing.out().lines().toList();
        assertThat(rows.get(0)).matches("#\\s+run\\s+lr\\s+fail\\s+result\\s+exit\\s+duration\\s+metric");
        assertThat(rows.get(1)).matches("1\\s+\\S+\\s+0\\.5\\s+-1\\s+succeeded\\s+0\\s+[\\d.]+s\\s+0");
        assertThat(rows.get(2)).matches("2\\s+\\S+\\s+0\\.5\\s+2\\s+failed\\s+1\\s+[\\d.]+s\\s+-");
        try (var runs = Files.list(tmp.resolve("runs2/sweep"))) {
            List<String> metrics = new ArrayList<>();
            for (Path f : runs.toList()) {
                metrics.add(Files.readString(f.resolve("summary.json")).replaceAll("(?s).*\"metric\" : ([^,\\s]+).*", "$1"));
            }
            assertThat(metrics).containsExactlyInAnyOrder("\"0\"", "null");
        }
        assertThat(failing.err()).containsPattern("runjob: sweep-\\S+ of job sweep: 2 runs, at most 1 at once");
    }

    @Test
    void stopOfASweepStartsNoMoreOfItsRunsAndStopsThoseRunning() throws Exception {
        Map<String, String> env = env("Tesla V100-PCIE-16GB|16384|0|7.0|0000:01:00;Tesla V100-PCIE-16GB|16384|0|7.0|0000:02:00");
        Path job = Path.of("jobs/sweep.yaml").toAbsolutePath();
        Path logs = tmp.resolve("runs");
        List<String> slow = List.of("--set", "logs.dir=" + logs, "--set", "env.STEP_SECONDS=0.2", "--set", "workdir=" + tmp.resolve("work"));
        // in the foreground, one run at a time: the first runs, two wait
        List<String> options = new ArrayList<>(slow);
        options.addAll(List.of("--max-parallel", "1"));
        Process sweep = start("sweep", env, options, job, List.of("--steps", "1000"));
        Poll.until(() -> Cli.runNow(env, "runs", "--logs-dir", logs.toString()).out().matches("(?s).*\\n\\S+\\s+sweep\\s+running\\s.*"),
                Duration.ofSeconds(60), "the sweep's first run to run");
        String id = Cli.runNow(env, "runs", "--logs-dir", logs.toString()).out().lines().filter(l -> l.startsWith("sweep-")).findFirst()
                .orElseThrow().split(" ")[0];
        Cli stop = Cli.runNow(env, "stop", id, "--logs-dir", logs.toString());
        assertThat(stop.code()).as(stop.err()).isZero();
        assertThat(stop.err()).contains("runjob: " + id + ": its runjob (pid " + sweep.pid() + ") starts no more runs and stops its own\n")
                .containsPattern("runjob: run \\S+ interrupted \\(exit 130\\)\n");
        assertThat(sweep.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(sweep.exitValue()).isEqualTo(ExitCode.INTERRUPTED);
        List<String> table = Files.readString(tmp.resolve("sweep.out")).lines().toList();
        assertThat(table.get(1)).matches("1\\s+\\S+\\s+0\\.1\\s+interrupted\\s+130\\s.*");
        assertThat(table.subList(2, 4)).allSatisfy(row -> assertThat(row).matches("[23]\\s+-\\s+0\\.0+1\\s+not started\\s+-\\s+-"));
        try (var folders = Files.list(logs.resolve("sweep"))) {
            assertThat(folders.count()).as("no run started after the stop").isEqualTo(1);
        }

        // detached, both at once on the two GPUs; a prefix of the id names the sweep
        List<String> detached = new ArrayList<>(slow);
        detached.addAll(List.of("--set", "sweep.lr=[0.2, 0.3]", "--detach"));
        Cli started = Cli.runNow(env, concat(detached, List.of(job.toString(), "--", "--steps", "1000")));
        assertThat(started.code()).as(started.err()).isZero();
        List<String> ids = started.out().lines().toList();
        assertThat(ids).hasSize(2);
        String second = started.err().lines().filter(l -> l.contains(" stops them all")).findFirst().orElseThrow()
                .replaceAll(".*runjob stop (sweep-\\S+) stops them all", "$1");
        Poll.until(() -> ids.stream().allMatch(r -> Cli.runNow(env, "status", r, "--logs-dir", logs.toString()).out().contains(": running")),
                Duration.ofSeconds(60), "both runs of the detached sweep to run");
        Cli stopBoth = Cli.runNow(env, "stop", second.substring(0, second.length() - 2), "--logs-dir", logs.toString());
        assertThat(stopBoth.code()).as(stopBoth.err()).isZero();
        for (String r : ids) {
            assertThat(stopBoth.err()).contains("runjob: run " + r + " interrupted (exit 130)\n");
        }
        assertThat(Cli.runNow(env, "stop", "sweep-nope", "--logs-dir", logs.toString()).err())
                .isEqualTo("runjob: no sweep sweep-nope (runjob runs lists sweeps above their runs)\n");
    }

    @Test
    void killingASweepsRunjobLeavesItsRunsRunningAndStopOfTheSweepStillEndsThem() throws Exception {
        Map<String, String> env = env("Tesla V100-PCIE-16GB|16384|0|7.0|0000:01:00;Tesla V100-PCIE-16GB|16384|0|7.0|0000:02:00");
        Path logs = tmp.resolve("runs");
        Process sweep = start("killed", env, List.of("--set", "logs.dir=" + logs, "--set", "env.STEP_SECONDS=0.2", "--set", "sweep.lr=[0.2, 0.3]",
                "--set", "workdir=" + tmp.resolve("work")), Path.of("jobs/sweep.yaml").toAbsolutePath(), List.of("--steps", "1000"));
        Poll.until(() -> Cli.runNow(env, "runs", "--logs-dir", logs.toString()).out().lines().filter(l -> l.matches("\\S+\\s+sweep\\s+running\\s.*"))
                .count() == 2, Duration.ofSeconds(60), "both runs of the sweep to run");
        String id = Cli.runNow(env, "runs", "--logs-dir", logs.toString()).out().lines().filter(l -> l.startsWith("sweep-")).findFirst()
                .orElseThrow().split(" ")[0];
        sweep.destroyForcibly(); // kill -9 of the sweep's own runjob
        assertThat(sweep.waitFor(10, TimeUnit.SECONDS)).isTrue();
        // each run is a runjob of its own, writing to its own console.log: the runs go on
        List<String> listed = Cli.runNow(env, "runs", "--logs-dir", logs.toString()).out().lines().toList();
        assertThat(listed.stream().filter(l -> l.matches("\\S+\\s+sweep\\s+running\\s.*")).count()).as(String.join("\n", listed)).isEqualTo(2);
        // the sweep's record edited to name another live runjob, with its real start time: it is not signalled
        Process other = start("other", env, List.of("--set", "logs.dir=" + tmp.resolve("other-runs"), "--set", "workdir=" + tmp.resolve("w2"),
                "--sweep-point", "0"), Path.of("jobs/sweep.yaml").toAbsolutePath(), List.of("--steps", "1000"));
        Poll.until(() -> startTicks(other.pid()) > 0, Duration.ofSeconds(10), "the other runjob to start");
        try (var folders = Files.list(logs.resolve("sweep"))) {
            for (Path f : folders.toList()) {
                Path record = f.resolve("sweep.json");
                String text = Files.readString(record);
                Files.writeString(record, text.replaceFirst("\"pid\" : \\d+", "\"pid\" : " + other.pid())
                        .replaceFirst("\"start_ticks\" : \\d+", "\"start_ticks\" : " + startTicks(other.pid())));
            }
        }
        Cli stop = Cli.runNow(env, "stop", id, "--logs-dir", logs.toString());
        assertThat(stop.code()).as(stop.err()).isZero();
        assertThat(stop.err()).doesNotContain("its runjob (pid").contains("runjob: " + id + ": its sweep.json names pid " + other.pid()
                + ", which is not the sweep's runjob (it does not hold the sweep's ");
        assertThat(other.isAlive()).as("the runjob the edited record named").isTrue();
        other.destroy();
        assertThat(other.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(stop.err().lines().filter(l -> l.matches("runjob: run \\S+ interrupted \\(exit 130\\)")).count()).isEqualTo(2);
    }

    /** Field 22 of /proc/PID/stat (start time in clock ticks), or 0. */
    private static long startTicks(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return Long.parseLong(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[19]);
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    private static String[] concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all.toArray(String[]::new);
    }

    @Test
    void aSweepWhoseRunsAreRefusedInPreflightSaysWhyForEach() throws Exception {
        Path job = Files.writeString(tmp.resolve("refused.yaml"), "name: refused\nnodes:\n  - {name: n1, local: true, workers: 1}\n"
                + "entrypoint: {command: [nosuchprogram, '${sweep.lr}']}\nsweep: {lr: [0.1, 0.2]}\nlogs: {dir: " + tmp.resolve("runs") + "}\n");
        Cli r = Cli.run(System.getenv(), job.toString());
        assertThat(r.code()).as(r.err()).isEqualTo(1);
        assertThat(r.err().lines().filter(l -> l.equals("runjob:   FAIL n1 program: cannot start nosuchprogram: not found on the node's PATH"))
                .count()).as(r.err()).isEqualTo(2);
    }

    @Test
    void twoRunsStartedTogetherOnOneFixedWorkdirAreNeverBothRefused() throws Exception {
        Path job = Files.writeString(tmp.resolve("fixed.yaml"), "name: fixed\nnodes:\n  - {name: a, local: true, workers: 1}\n"
                + "  - {name: b, local: true, workers: 1}\nworkdir: " + tmp.resolve("fixed") + "\nruns_share_workdir: true\n"
                + "entrypoint: {command: [sleep, '1']}\nlogs: {dir: " + tmp.resolve("runs") + "}\n");
        neverBothRefused(job, 2);
    }

    @Test
    void twoRunsStartedTogetherOnTwoFixedWorkdirsAreNeverBothRefused() throws Exception {
        // each node its own workdir: each run may take one node's lock first; the refused preflight is tried again
        Path job = Files.writeString(tmp.resolve("fixed.yaml"), "name: fixed\nnodes:\n"
                + "  - {name: a, local: true, workers: 1, workdir: " + tmp.resolve("fixed-a") + "}\n"
                + "  - {name: b, local: true, workers: 1, workdir: " + tmp.resolve("fixed-b") + "}\nruns_share_workdir: true\n"
                + "entrypoint: {command: [sleep, '1']}\nlogs: {dir: " + tmp.resolve("runs") + "}\n");
        neverBothRefused(job, 1);
    }

    private void neverBothRefused(Path job, int rounds) throws Exception {
        for (int round = 0; round < rounds; round++) {
            Process one = start("one", Map.of(), List.of(), job, List.of());
            Process two = start("two", Map.of(), List.of(), job, List.of());
            assertThat(one.waitFor(60, TimeUnit.SECONDS) && two.waitFor(60, TimeUnit.SECONDS)).isTrue();
            List<Integer> codes = List.of(one.exitValue(), two.exitValue());
            assertThat(codes).as("round " + round + ":\n" + stderr("one") + "\n" + stderr("two")).containsAnyOf(0).allMatch(c -> c == 0 || c == 3);
            for (String name : List.of("one", "two")) {
                if (stderr(name).contains("is in use by")) {
                    // the holder is named from its lock: its run, job, user and pid, never a question mark
                    assertThat(stderr(name)).containsPattern("is in use by run \\S+ of job fixed \\(user \\S+, since \\S+Z, pid \\d+\\)");
                }
            }
        }
    }

    /** This JVM's environment with stand-in {@code gpus}, HOME (so ~/.runjob) and the GPU leases in the test's folder. */
    private Map<String, String> env(String gpus) throws IOException {
        Map<String, String> env = FakeCuda.env(gpus);
        env.put("HOME", Files.createDirectories(tmp.resolve("home")).toString());
        env.put("RUNJOB_GPU_LEASES", tmp.resolve("leases").toString());
        return env;
    }

    /** One run of examples/sweep/train.py on one free GPU of this machine, node "here". */
    private Path oneRun() throws IOException {
        return Files.writeString(tmp.resolve("one.yaml"), "name: sweep\nnodes:\n  - {name: here, local: true, gpus: {count: 1}}\n"
                + "files: [" + Path.of("examples/sweep/train.py").toAbsolutePath() + "]\nentrypoint: {command: [python3, train.py]}\n");
    }

    @Test
    void aNewRunOfTheSweepExampleNeverResumesAnEarlierRunsCheckpoint() throws Exception {
        Map<String, String> env = env(GpuLeaseTest.IDLE);
        String logs = "logs.dir=" + tmp.resolve("runs");
        for (int i = 0; i < 2; i++) {
            Cli run = Cli.runNow(env, "--set", logs, "--set", "env.STEP_SECONDS=0", oneRun().toString(), "--", "--lr", "0.5", "--steps", "3");
            assertThat(run.code()).as(run.err()).isZero();
            assertThat(run.out()).isEqualTo("[here/0] lr 0.5 on GPU 0: loss 0 after 3 steps\n");
        }
        // runs that share one directory find what the last one left: the trap per-run directories remove
        for (String expected : List.of("[here/0] lr 0.5 on GPU 0: loss 0 after 3 steps\n",
                "[here/0] resumed at step 3\n[here/0] lr 0.5 on GPU 0: loss 0 after 3 steps\n")) {
            Cli run = Cli.runNow(env, "--set", logs, "--set", "env.STEP_SECONDS=0", "--set", "runs_share_workdir=true", oneRun().toString(),
                    "--", "--lr", "0.5", "--steps", "3");
            assertThat(run.code()).as(run.err()).isZero();
            assertThat(run.out()).isEqualTo(expected);
        }
    }

    @Test
    void resumeContinuesARunThatFailedInItsDirectoryAsItsNextAttempt() throws Exception {
        Map<String, String> env = env(GpuLeaseTest.IDLE);
        Path logs = tmp.resolve("runs");
        Cli failed = Cli.runNow(env, "--set", "logs.dir=" + logs, "--set", "env.STEP_SECONDS=0", "--set", "env.FAIL_AT_STEP=3",
                oneRun().toString(), "--", "--lr", "0.25", "--steps", "5");
        assertThat(failed.code()).isEqualTo(ExitCode.WORKER_FAILED);
        assertThat(failed.out()).isEqualTo("[here/0] failing at step 3\n");
        Path folder;
        try (var runs = Files.list(logs.resolve("sweep"))) {
            folder = runs.findFirst().orElseThrow();
        }
        String runId = folder.getFileName().toString();
        // from another directory: the run folder is found through the run index, and stays where it is
        Cli resumed = Cli.runNow(env, "resume", runId);
        assertThat(resumed.code()).as(resumed.err()).isZero();
        assertThat(resumed.err()).startsWith("runjob: resuming run " + runId + " of job sweep as attempt 1\n");
        assertThat(resumed.out()).isEqualTo("[here/0#1] resumed at step 3\n[here/0#1] lr 0.25 on GPU 0: loss 0.0244141 after 5 steps\n");
        assertThat(Files.readString(folder.resolve("rank-0.attempt-1.log"))).isEqualTo("resumed at step 3\nlr 0.25 on GPU 0: loss 0.0244141 after 5 steps\n");
        assertThat(Files.readString(folder.resolve("summary.until-attempt-0.json"))).contains("\"result\" : \"failed\"");
        assertThat(Files.readString(folder.resolve("summary.json"))).contains("\"result\" : \"succeeded\"");
        Cli status = Cli.runNow(env, "status", runId);
        assertThat(status.out()).startsWith("run " + runId + " of job sweep: succeeded (exit 0)");
        // a run that ended well has nothing left to do, but may still be resumed; one that never ran cannot be
        Cli again = Cli.runNow(env, "resume", "nosuchrun");
        assertThat(again.code()).isEqualTo(ExitCode.INVALID);
    }

    private Process start(String name, Map<String, String> env, List<String> options, Path job, List<String> args) throws IOException {
        Process p = RunjobProcess.start(tmp, name, env, options, job, args);
        toClean.add(p);
        return p;
    }

    private String stderr(String name) {
        try {
            return Files.readString(tmp.resolve(name + ".err"));
        } catch (IOException e) {
            return "";
        }
    }

    private long marks() {
        try (var files = Files.list(tmp.resolve("marks"))) {
            return files.count();
        } catch (IOException e) {
            return 0;
        }
    }
}
