package org.runjob.runs;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.runjob.backends.Backends;
import org.runjob.json.Json;
import org.runjob.logs.Coordinator;
import org.runjob.node.Backend;
import org.runjob.node.BatchQueue;
import org.runjob.plan.RunId;
import org.runjob.plan.ShellWords;
import org.runjob.report.EnvironmentJson;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.Jobs;
import org.runjob.run.Quarantined;
import org.runjob.run.Requeued;
import org.runjob.run.RunIds;
import org.runjob.run.RunIndex;
import org.runjob.run.RunJob;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;
import org.runjob.spec.SpecLoader;
import org.runjob.spec.Sweep;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code runjob submit FILE} for a backend with a queue of its own ({@link Backend#queue}: Slurm's
 * sbatch). The run folder is made here, under the job's {@code logs.dir}, which the compute nodes
 * must see (a shared filesystem); the job is queued with this runjob (its java, JVM flags and
 * content-pinned jar) as the batch step's command, which runs the run inside the allocation it is given. Nothing
 * stays on this machine. The folder's {@value #QUEUE_FILE} names the backend and the job id, so
 * {@code runs}, {@code status} and {@code stop} ask the scheduler about a run whose runjob lives
 * elsewhere. A requeued job (preemption, {@code --requeue}) starts the same coordinator again, which
 * goes on with the same run as its next attempt ({@link Requeued}).
 */
public final class QueuedRun {

    static final String QUEUE_FILE = "queued.json";
    /** How long withdrawn runs are given to leave the queue (a started one stops first) before their folders go. */
    private static final long WITHDRAW_WAIT_S = 60;
    private static final JsonMapper JSON = Json.MAPPER;
    /** The batch script in the run folder: a constant {@code exec "$@"}, with what it stands for in comments. */
    static final String BATCH_SCRIPT = "submit.sh";
    private static final String SCRIPT = "#!/bin/sh\n# runjob's batch step: the coordinator's argv comes as arguments\n";

    private QueuedRun() {
    }

    /**
     * The batch script: a constant {@code exec "$@"}, after comment lines that show each node's
     * environment block (as JSON: a value's newline cannot end its comment). Its agent step
     * activates that environment itself on its node, never this shell.
     */
    static String script(JobSpec spec) {
        StringBuilder b = new StringBuilder(SCRIPT);
        if (spec.nodes().stream().anyMatch(n -> n.environment().present())) {
            b.append("# each node's agent step activates its environment there (modules, source, venv or conda,\n")
                    .append("# setup, container) before its workers start; nothing of it runs in this shell:\n");
            for (NodeSpec n : spec.nodes()) {
                b.append("#   ").append(Json.compact(n.name())).append(": ").append(Json.compact(EnvironmentJson.block(n.environment()))).append('\n');
            }
        }
        return b.append("exec \"$@\"\n").toString();
    }

    /** The batch script for a run queued with its queue's {@code header} lines first ({@link BatchQueue#scriptHeader}), then {@link #script(JobSpec)}'s. */
    static String script(JobSpec spec, String header) {
        return SCRIPT + header + script(spec).substring(SCRIPT.length());
    }

    /** A run queued: its id, folder and the scheduler's job id. */
    public record Queued(String runId, Path folder, String jobId) {
    }

    /** Queues one run; prints its id. */
    static int submit(Io io, SpecLoader.Loaded loaded, Backend backend, List<String> args) throws IOException {
        List<Queued> queued = new ArrayList<>();
        int code = queue(io, loaded, backend, args, Optional.empty(), queued);
        if (code == ExitCode.OK && !queued.isEmpty()) {
            Jobs.handedOver(io, queued.get(0).runId(), "");
        }
        return code;
    }

    /** What a placeholder stands for in {@link #dryRun}'s command: the run folder, as yet unmade. */
    static final String FOLDER_PLACEHOLDER = "RUN_FOLDER";
    static final String RUN_ID_PLACEHOLDER = "RUN_ID";

    /**
     * {@code runjob submit --dry-run}: the exact command {@link #queue} would run and the batch
     * script it would write, with {@value #FOLDER_PLACEHOLDER} for the run folder (made only by
     * the real submit) and {@value #RUN_ID_PLACEHOLDER} for the run id; nothing is queued, no run
     * folder is made. A layout's hostfile is shown by its lines.
     */
    static int dryRun(Io io, SpecLoader.Loaded loaded, Backend backend, List<String> args) throws IOException {
        BatchQueue batch = queueOf(backend);
        JobSpec spec = loaded.spec();
        Path logs = Path.of(spec.logsDir()).toAbsolutePath().normalize();
        Path scratch = Files.createTempDirectory("runjob-submit-dry-");
        try {
            Path folder = scratch.resolve(FOLDER_PLACEHOLDER);
            Files.createDirectory(folder);
            List<String> queue;
            try {
                queue = batch.submit(spec, folder, folder.resolve(BATCH_SCRIPT),
                        coordinator(folder.resolve(Submission.JOB_FILE), RUN_ID_PLACEHOLDER, logs, Optional.empty(), args),
                        Quarantined.machines(io, spec), io.env());
            } catch (IllegalArgumentException e) {
                io.err().println("runjob: " + e.getMessage());
                return ExitCode.INVALID;
            }
            String where = scratch.toString() + "/";
            io.out().println("# runjob submit runs, once it made the run folder " + logs.resolve(spec.name()).resolve(RUN_ID_PLACEHOLDER)
                    + " (" + FOLDER_PLACEHOLDER + " below):");
            // the job's comment names the run by its id, as yet unmade
            String comment = "/" + FOLDER_PLACEHOLDER + " ";
            io.out().println((ShellWords.join(queue) + " ").replace(where, "").replace(comment, "/" + RUN_ID_PLACEHOLDER + " ").stripTrailing());
            printHostfile(io, folder, FOLDER_PLACEHOLDER);
            io.out().println("# " + FOLDER_PLACEHOLDER + "/" + BATCH_SCRIPT + ", the batch script (the coordinator's argv comes as its arguments):");
            io.out().print(script(spec, batch.scriptHeader(queue)).replace(where, "").replace("/" + FOLDER_PLACEHOLDER + "\n", "/" + RUN_ID_PLACEHOLDER + "\n"));
            io.out().flush();
            return ExitCode.OK;
        } finally {
            RunJob.removeRefused(scratch);
        }
    }

    /** What a placeholder stands for in {@link #dryRunArray}'s command: the sweep's folder, as yet unmade. */
    static final String SWEEP_FOLDER_PLACEHOLDER = "SWEEP_FOLDER";

    /**
     * {@code runjob submit --dry-run} of a sweep: the job array {@link #submitSweep} would queue
     * (with {@value #SWEEP_FOLDER_PLACEHOLDER} for the sweep's folder), or, where its points cannot
     * be one array, why, and the first run's job ({@link #dryRun}).
     */
    static int dryRunSweep(Io io, String file, List<String> sets, List<String> args, SpecLoader.Loaded first, Backend backend,
                           Optional<Integer> maxParallel) throws IOException {
        BatchQueue batch = queueOf(backend);
        int size = first.sweep().orElseThrow().size();
        Optional<Points> loaded = points(io, file, sets, args, size, backend, maxParallel);
        if (loaded.isEmpty()) {
            return ExitCode.INVALID;
        }
        List<SpecLoader.Loaded> points = loaded.get().points();
        Optional<String> apart = loaded.get().apart();
        if (apart.isPresent()) {
            io.out().println("# a sweep of " + size + " runs: one batch job each (" + apart.get() + "); the first run's:");
            return dryRun(io, points.get(0), backend, args);
        }
        JobSpec spec = points.get(0).spec();
        Path logs = logsOf(spec);
        Path scratch = Files.createTempDirectory("runjob-submit-dry-");
        try {
            Path folder = Files.createDirectory(scratch.resolve(SWEEP_FOLDER_PLACEHOLDER));
            List<String> run = new ArrayList<>(List.of("run", folder.resolve(ARRAY_FILE).toString(), "--array-task", "--continue-requeued",
                    "--set", "logs.dir=" + logs, "--"));
            run.addAll(args);
            List<String> queue = batch.submitArray(spec, folder, folder.resolve(BATCH_SCRIPT), Detach.runjob(run),
                    Quarantined.machines(io, spec), size, maxParallel, io.env()).orElseThrow();
            io.out().println("# a sweep of " + size + " runs as one job array; runjob submit runs, once it made a folder per run and the sweep's "
                    + logs.resolve(spec.name()).resolve("sweep-ID") + " (" + SWEEP_FOLDER_PLACEHOLDER + " below):");
            io.out().println((ShellWords.join(queue) + " ").replace(scratch + "/", "").replace("/" + SWEEP_FOLDER_PLACEHOLDER + " ", "/sweep-ID ")
                    .stripTrailing());
            printHostfile(io, folder, SWEEP_FOLDER_PLACEHOLDER);
            io.out().println("# " + SWEEP_FOLDER_PLACEHOLDER + "/" + ARRAY_FILE + " names each task's run (task N: point N);"
                    + " " + SWEEP_FOLDER_PLACEHOLDER + "/" + BATCH_SCRIPT + ", the batch script (the coordinator's argv comes as its arguments):");
            io.out().print(script(spec, batch.scriptHeader(queue)).replace(scratch + "/", "").replace("/" + SWEEP_FOLDER_PLACEHOLDER + "\n", "/sweep-ID\n"));
            io.out().flush();
            return ExitCode.OK;
        } finally {
            RunJob.removeRefused(scratch);
        }
    }

    private static void printHostfile(Io io, Path folder, String placeholder) throws IOException {
        Path hostfile = folder.resolve("hostfile");
        if (Files.isRegularFile(hostfile)) {
            io.out().println("# " + placeholder + "/hostfile, one line per task:");
            Files.readAllLines(hostfile).forEach(l -> io.out().println("#   " + l));
        }
    }

    /** The coordinator's argv: this runjob's java, flags and content-pinned jar, running the handed job in its run folder. */
    private static List<String> coordinator(Path job, String runId, Path logs, Optional<SweepRecord> sweep, List<String> args)
            throws IOException {
        List<String> run = new ArrayList<>(List.of("run", job.toString(), "--run-id", runId,
                "--continue-requeued", "--set", "logs.dir=" + logs));
        sweep.ifPresent(w -> run.addAll(List.of("--sweep-point", Integer.toString(w.point()))));
        run.add("--");
        run.addAll(args);
        return Detach.runjob(run);
    }

    /** The table a job array's tasks read their run from ({@link #ARRAY_FILE}), in the sweep's folder. */
    public static final String ARRAY_FILE = "array.json";

    /**
     * Queues the job's sweep, each point a run with a folder of its own that names the sweep
     * ({@link SweepRecord}), so {@code runs} groups them and {@code stop SWEEP} stops them; prints
     * their run ids. Where the backend runs job arrays and every point asks for the same
     * allocation, the sweep is one array ({@link #queueArray}), at most {@code maxParallel} tasks
     * at once; otherwise each point is a job of its own ({@code maxParallel} is then refused: the
     * scheduler has nothing to hold the others back with). When one cannot be queued, those
     * already queued are withdrawn: the sweep is queued whole or not at all.
     */
    static int submitSweep(Io io, String file, List<String> sets, List<String> args, SpecLoader.Loaded first, Backend backend,
                           Optional<Integer> maxParallel) throws IOException {
        Sweep sweep = first.sweep().orElseThrow();
        String id = SweepRecord.PREFIX + RunId.of(io.clock().instant(), io.random().getAsInt());
        Optional<Points> loaded = points(io, file, sets, args, sweep.size(), backend, maxParallel);
        if (loaded.isEmpty()) {
            return ExitCode.INVALID;
        }
        List<SpecLoader.Loaded> points = loaded.get().points();
        Optional<String> apart = loaded.get().apart();
        if (apart.isEmpty()) {
            return queueArray(io, id, points, backend, args, maxParallel);
        }
        List<Queued> queued = new ArrayList<>();
        for (int i = 0; i < sweep.size(); i++) {
            int code = queue(io, points.get(i), backend, args, Optional.of(
                    new SweepRecord(id, first.spec().name(), i, sweep.size(), sweep.point(i), Coordinator.current())), queued);
            if (code != ExitCode.OK) {
                withdraw(io, backend, queued);
                io.err().println("runjob: " + id + " is not queued: run " + (i + 1) + " of " + sweep.size() + " could not be"
                        + (queued.isEmpty() ? "" : ", and the " + queued.size() + " queued before it were withdrawn"));
                return code;
            }
        }
        queued.forEach(q -> io.out().println(q.runId()));
        io.out().flush();
        io.err().println("runjob: " + id + " of job " + first.spec().name() + ": " + queued.size() + " runs queued as " + backend.name()
                + " jobs " + queued.get(0).jobId() + "-" + queued.get(queued.size() - 1).jobId() + " (" + apart.get()
                + ", so not as one job array); runjob runs lists them, runjob stop " + id + " stops them all; this machine may now go");
        return ExitCode.OK;
    }

    /** A sweep's points, each loaded, and why they cannot be one job array (empty when they can). */
    private record Points(List<SpecLoader.Loaded> points, Optional<String> apart) {
    }

    /**
     * Loads the sweep's {@code size} points and judges them ({@link #arrayRefused}); empty, after
     * saying why, for a point that does not load, a job the backend cannot queue, or
     * {@code maxParallel} of points that cannot be one array.
     */
    private static Optional<Points> points(Io io, String file, List<String> sets, List<String> args, int size, Backend backend,
                                           Optional<Integer> maxParallel) throws IOException {
        List<SpecLoader.Loaded> points = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            SpecLoader.Loaded point = Jobs.load(io, file, sets, args, i);
            if (point == null) {
                return Optional.empty();
            }
            points.add(point);
        }
        Optional<String> apart;
        try {
            apart = arrayRefused(io, points, backend, maxParallel);
        } catch (IllegalArgumentException e) {
            io.err().println("runjob: " + e.getMessage());
            return Optional.empty();
        }
        if (apart.isPresent() && maxParallel.isPresent()) {
            io.err().println("runjob: --max-parallel needs the sweep queued as one job array, and " + apart.get()
                    + ": each point would be a job of its own, which " + backend.name() + " runs as it has room");
            return Optional.empty();
        }
        return Optional.of(new Points(points, apart));
    }

    /**
     * Why the sweep's points cannot be one job array (empty when they can): the backend runs no
     * arrays of this job, or a point's allocation, batch script or logs dir differs from the first's
     * (each point's queue command is made in one scratch folder and compared, its hostfile with it).
     */
    private static Optional<String> arrayRefused(Io io, List<SpecLoader.Loaded> points, Backend backend, Optional<Integer> maxParallel)
            throws IOException {
        Path scratch = Files.createTempDirectory("runjob-array-");
        try {
            List<String> first = null;
            for (int i = 0; i < points.size(); i++) {
                JobSpec spec = points.get(i).spec();
                Optional<List<String>> argv = queueOf(backend).submitArray(spec, scratch, scratch.resolve(BATCH_SCRIPT), List.of(),
                        Quarantined.machines(io, spec), points.size(), maxParallel, io.env());
                if (argv.isEmpty()) {
                    return Optional.of(backend.name() + " runs no job array of this job's allocation");
                }
                List<String> key = new ArrayList<>(argv.get());
                key.add(script(spec));
                key.add(logsOf(spec).toString());
                Path hostfile = scratch.resolve("hostfile");
                if (Files.isRegularFile(hostfile)) {
                    key.add(Files.readString(hostfile));
                    Files.delete(hostfile);
                }
                if (first == null) {
                    first = key;
                } else if (!first.equals(key)) {
                    return Optional.of("run " + (i + 1) + " asks for another allocation than the first");
                }
            }
            return Optional.empty();
        } finally {
            RunJob.removeRefused(scratch);
        }
    }

    /**
     * The sweep as one job array: a folder per point (as {@link #queue} makes one), and the sweep's
     * own folder beside them ({@code LOGS/JOB/SWEEP/}) with the batch script, the tasks' scheduler
     * output and {@value #ARRAY_FILE}, from which each task's coordinator takes its run by the
     * task's index ({@code run ARRAY_FILE --array-task}). Each run's {@value #QUEUE_FILE} names its
     * task's job id and the command that would queue it alone ({@code submit --resume}).
     */
    private static int queueArray(Io io, String id, List<SpecLoader.Loaded> points, Backend backend, List<String> args,
                                  Optional<Integer> maxParallel) throws IOException {
        BatchQueue batch = queueOf(backend);
        JobSpec first = points.get(0).spec();
        Sweep sweep = points.get(0).sweep().orElseThrow();
        for (SpecLoader.Loaded point : points) {
            // a quarantined node the job names fails here, before anything is queued
            if (Quarantined.avoid(io, point.spec()).isEmpty()) {
                return ExitCode.PREFLIGHT_FAILED;
            }
        }
        List<Prepared> runs = new ArrayList<>();
        Path logs = logsOf(first);
        Path folder = logs.resolve(first.name()).resolve(id);
        boolean queuedAll = false;
        try {
            for (int i = 0; i < points.size(); i++) {
                runs.add(prepare(io, points.get(i), args, Optional.of(
                        new SweepRecord(id, first.name(), i, points.size(), sweep.point(i), Coordinator.current()))));
            }
            Files.createDirectory(folder, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
            var table = JSON.createObjectNode().put("sweep", id).put("task_variable", batch.arrayTaskVariable());
            var list = table.putArray("runs");
            for (int i = 0; i < runs.size(); i++) {
                list.addObject().put("task", i).put("run_id", runs.get(i).runId()).put("job", runs.get(i).job().toString());
            }
            Path arrayFile = folder.resolve(ARRAY_FILE);
            Files.writeString(arrayFile, JSON.writeValueAsString(table));
            Path script = writeScript(folder, first);
            List<String> run = new ArrayList<>(List.of("run", arrayFile.toString(), "--array-task", "--continue-requeued",
                    "--set", "logs.dir=" + logs, "--"));
            run.addAll(args);
            List<String> queue = batch.submitArray(first, folder, script, Detach.runjob(run), Quarantined.machines(io, first),
                    points.size(), maxParallel, io.env()).orElseThrow();
            Files.writeString(script, script(first, batch.scriptHeader(queue)));
            Ran ran = run(io, queue);
            if (ran.code() == 0 && batch.asksOnly(queue)) {
                io.err().println("runjob: " + backend.name() + " was asked only whether it would run the job array (--test-only), and said: "
                        + ran.out());
                return ExitCode.OK;
            }
            Optional<String> arrayId = ran.jobId(batch);
            if (arrayId.isEmpty()) {
                io.err().println("runjob: " + backend.name() + " refused the job array: " + ran.out());
                io.err().println("runjob: " + id + " is not queued");
                return ExitCode.PREFLIGHT_FAILED;
            }
            try {
                for (int i = 0; i < runs.size(); i++) {
                    Prepared r = runs.get(i);
                    List<String> alone = batch.submit(r.spec(), r.folder(), r.script(), r.coordinator(),
                            Quarantined.machines(io, r.spec()), io.env());
                    Files.writeString(r.script(), script(r.spec(), batch.scriptHeader(alone)));
                    writeRecord(r.folder(), backend, batch.arrayTask(arrayId.get(), i), alone, List.of(), arrayId);
                    RunIndex.add(io, RunIndex.Entry.here(r.runId(), r.spec().name(), io.clock().instant(), r.folder()));
                }
            } catch (IOException | RuntimeException e) {
                // the array is queued, its runs' records are not: withdrawn, before any task can start in a folder half made
                batch.cancel(arrayId.get(), true, io.env());
                throw e;
            }
            queuedAll = true;
            runs.forEach(r -> io.out().println(r.runId()));
            io.out().flush();
            io.err().println("runjob: " + id + " of job " + first.name() + ": " + runs.size() + " runs queued as " + backend.name()
                    + " job array " + arrayId.get() + " (tasks 0-" + (runs.size() - 1)
                    + maxParallel.map(k -> ", at most " + k + " at once").orElse("") + "); its folder is " + folder
                    + batch.output(folder, batch.arrayTask(arrayId.get(), 0)).map(o -> ", task 0's batch output " + o).orElse("")
                    + "; runjob runs lists them, runjob stop " + id + " stops them all; this machine may now go");
            return ExitCode.OK;
        } finally {
            if (!queuedAll) {
                runs.forEach(r -> RunJob.removeRefused(r.folder()));
                RunJob.removeRefused(folder);
            }
        }
    }

    /**
     * Cancels the queued runs and, once their jobs have left the queue (a run that had started
     * stops first and may have written to its folder), removes their folders.
     */
    private static void withdraw(Io io, Backend backend, List<Queued> queued) {
        BatchQueue batch = queueOf(backend);
        queued.forEach(q -> batch.cancel(q.jobId(), true, io.env()));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WITHDRAW_WAIT_S);
        for (Queued q : queued) {
            while (batch.state(q.jobId(), io.env()).isPresent() && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            RunJob.removeRefused(q.folder());
        }
    }

    /**
     * A run's folder made for the queue: its job ({@value Submission#JOB_FILE}), batch script and
     * sweep record written, and the argv of the coordinator that runs it; nothing queued yet.
     */
    private record Prepared(JobSpec spec, String runId, Path folder, Path job, Path script, List<String> coordinator) {
    }

    /** Makes {@code loaded}'s run folder under its logs dir ({@link Prepared}). */
    private static Prepared prepare(Io io, SpecLoader.Loaded loaded, List<String> args, Optional<SweepRecord> sweep) throws IOException {
        JobSpec spec = loaded.spec();
        Path logs = logsOf(spec);
        String runId = RunIds.claim(io, logs.resolve(spec.name()));
        Path folder = logs.resolve(spec.name()).resolve(runId);
        if (sweep.isPresent()) {
            sweep.get().write(folder);
        }
        Path job = folder.resolve(Submission.JOB_FILE);
        // the nodes see this machine's files where they are (a shared filesystem)
        Files.writeString(job, JSON.writeValueAsString(Submit.handedJob(loaded, f -> f.source().toAbsolutePath().toString())));
        Path script = writeScript(folder, spec);
        // the coordinator: this runjob's java, flags (heap, collector, class-data archive) and content-pinned jar
        return new Prepared(spec, runId, folder, job, script, coordinator(job, runId, logs, sweep, args));
    }

    private static Path logsOf(JobSpec spec) {
        return Path.of(spec.logsDir()).toAbsolutePath().normalize();
    }

    private static Path writeScript(Path folder, JobSpec spec) throws IOException {
        Path script = folder.resolve(BATCH_SCRIPT);
        Files.writeString(script, script(spec));
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        return script;
    }

    /** Queues {@code loaded} as one run (of {@code sweep}, when given), added to {@code queued}; the exit code. */
    private static int queue(Io io, SpecLoader.Loaded loaded, Backend backend, List<String> args, Optional<SweepRecord> sweep,
                             List<Queued> queued) throws IOException {
        BatchQueue batch = queueOf(backend);
        Prepared run = prepare(io, loaded, args, sweep);
        JobSpec spec = run.spec();
        String runId = run.runId();
        Path folder = run.folder();
        // a quarantined node the job names fails here, before anything is queued; Slurm keeps counted nodes off them
        if (Quarantined.avoid(io, spec).isEmpty()) {
            RunJob.removeRefused(folder);
            return ExitCode.PREFLIGHT_FAILED;
        }
        List<String> queue;
        try {
            queue = batch.submit(spec, folder, run.script(), run.coordinator(), Quarantined.machines(io, spec), io.env());
        } catch (IllegalArgumentException e) {
            io.err().println("runjob: " + e.getMessage());
            RunJob.removeRefused(folder);
            return ExitCode.INVALID;
        }
        Files.writeString(run.script(), script(spec, batch.scriptHeader(queue)));
        Ran ran = run(io, queue);
        if (ran.code() == 0 && batch.asksOnly(queue)) {
            // slurm.alloc_args asked Slurm only whether and when it would run: nothing is queued
            io.err().println("runjob: " + backend.name() + " was asked only whether it would run the job (--test-only), and said: " + ran.out());
            RunJob.removeRefused(folder);
            return ExitCode.OK;
        }
        Optional<String> queuedAs = ran.jobId(batch);
        if (queuedAs.isEmpty()) {
            io.err().println("runjob: " + backend.name() + " refused the run: " + ran.out());
            RunJob.removeRefused(folder);
            return ExitCode.PREFLIGHT_FAILED;
        }
        String jobId = queuedAs.get();
        writeRecord(folder, backend, jobId, queue, List.of(), Optional.empty());
        RunIndex.add(io, RunIndex.Entry.here(runId, spec.name(), io.clock().instant(), folder));
        io.err().println("runjob: run " + runId + " is queued as " + backend.name() + " job " + jobId + "; its folder is " + folder
                + " (the nodes must see it)" + batch.output(folder, jobId).map(o -> ", the batch job's own output " + o).orElse("")
                + (sweep.isPresent() ? "" : "; this machine may now go"));
        queued.add(new Queued(runId, folder, jobId));
        return ExitCode.OK;
    }

    /**
     * {@code runjob submit --resume RUN}: queues a submitted run that ended as its next attempt, by
     * running again the command it was queued with ({@code queued.json}'s {@code command}): the same
     * run id, folder and coordinator, whose start goes on from the attempts the folder holds, as a
     * requeued job's does. The folder's {@value #QUEUE_FILE} then names the new job (the earlier
     * ones under {@code earlier_job_ids}). Refused, changing nothing: a run still queued or running,
     * one not queued with a scheduler, one queued before runjob kept the command.
     */
    public static int resume(Io io, RunRecords.Run given) throws IOException {
        Optional<Map.Entry<Backend, String>> queued = of(given.folder());
        if (queued.isEmpty()) {
            io.err().println("runjob: run " + given.runId() + " was not queued with a scheduler: runjob resume " + given.runId() + " continues it");
            return ExitCode.INVALID;
        }
        // one resume of a run at a time: a second at once would queue a second job for the one folder
        try (FileChannel ch = FileChannel.open(given.folder().resolve(RESUME_LOCK), StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS); FileLock lock = tryLock(ch)) {
            if (lock == null) {
                io.err().println("runjob: run " + given.runId() + " is being queued again by another runjob submit --resume: nothing was done");
                return ExitCode.INVALID;
            }
            // read again under the lock: a resume that ended just now made the run queued
            return resumeLocked(io, RunRecords.read(given.folder(), io.env()), queued.get());
        }
    }

    /** The channel's lock, or null while another holds it (another process, or another thread of this one). */
    private static FileLock tryLock(FileChannel ch) throws IOException {
        try {
            return ch.tryLock();
        } catch (OverlappingFileLockException e) {
            return null;
        }
    }

    /** The lock file {@link #resume} holds while it queues a run again. */
    private static final String RESUME_LOCK = ".resume.lock";

    private static int resumeLocked(Io io, RunRecords.Run run, Map.Entry<Backend, String> queued) throws IOException {
        if (run.live()) {
            io.err().println("runjob: run " + run.runId() + " is " + run.state() + ": it has not ended (runjob stop " + run.runId() + " ends it)");
            return ExitCode.INVALID;
        }
        JsonNode record = Json.read(run.folder().resolve(QUEUE_FILE));
        List<String> kept = new ArrayList<>();
        record.path("command").forEach(w -> kept.add(w.asString()));
        if (kept.isEmpty()) {
            io.err().println("runjob: run " + run.runId() + " was queued before runjob kept the command it was queued with: submit its job again");
            return ExitCode.INVALID;
        }
        Backend backend = queued.getKey();
        BatchQueue batch = queueOf(backend);
        // counted nodes keep off the nodes quarantined now, not those of the first submit
        JsonNode job = Json.read(run.folder().resolve(Submission.JOB_FILE));
        boolean avoids = job.path("failure").path("quarantine_s").asLong(1) != 0;
        List<String> command = batch.again(kept, run.folder().resolve(BATCH_SCRIPT), avoids ? Quarantined.machines(io) : Set.of());
        Ran ran = run(io, command);
        Optional<String> jobId = ran.jobId(batch);
        if (jobId.isEmpty()) {
            io.err().println("runjob: " + backend.name() + " refused the run: " + ran.out());
            return ExitCode.PREFLIGHT_FAILED;
        }
        List<String> earlier = new ArrayList<>();
        record.path("earlier_job_ids").forEach(w -> earlier.add(w.asString()));
        earlier.add(queued.getValue());
        writeRecord(run.folder(), backend, jobId.get(), command, earlier, Optional.empty());
        io.err().println("runjob: run " + run.runId() + " is queued again as " + backend.name() + " job " + jobId.get()
                + ": it goes on as its next attempt in " + run.folder() + "; this machine may now go");
        io.out().println(run.runId());
        io.out().flush();
        return ExitCode.OK;
    }

    /**
     * The folder's {@value #QUEUE_FILE}: the backend, the job id, the command that queues the run
     * as a job of its own (what {@link #resume} runs), the jobs before it, if any, and the job
     * array it is a task of, if it is one ({@code array_job_id}).
     */
    private static void writeRecord(Path folder, Backend backend, String jobId, List<String> command, List<String> earlier,
                                    Optional<String> array) throws IOException {
        var record = JSON.createObjectNode().put("backend", backend.name()).put("job_id", jobId);
        array.ifPresent(a -> record.put("array_job_id", a));
        command.forEach(record.putArray("command")::add);
        if (!earlier.isEmpty()) {
            earlier.forEach(record.putArray("earlier_job_ids")::add);
        }
        Files.writeString(folder.resolve(QUEUE_FILE), JSON.writeValueAsString(record));
    }

    /** A queue command's exit status and output (stdout and stderr, trimmed). */
    private record Ran(int code, String out) {
        /** The job id the queue command printed, when it exited 0 and queued one ({@link BatchQueue#jobId}). */
        Optional<String> jobId(BatchQueue queue) {
            return code == 0 ? queue.jobId(out) : Optional.empty();
        }
    }

    /** Runs a queue command with runjob's environment and nothing on its stdin. */
    private static Ran run(Io io, List<String> queue) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(queue).redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(io.env());
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        try {
            return new Ran(p.waitFor(), out);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Ran(-1, out);
        }
    }

    /** The batch queue of {@code backend}, which a queued run's backend has (submit queues only where there is one). */
    private static BatchQueue queueOf(Backend backend) {
        return backend.queue().orElseThrow(() -> new IllegalStateException("backend " + backend.name() + " has no batch queue"));
    }

    /** The backend and job id a queued run's folder names, if it is one. */
    public static Optional<Map.Entry<Backend, String>> of(Path folder) {
        return named(folder, "job_id");
    }

    /** The backend and job array a queued run's folder names it a task of ({@code array_job_id}), if it is one. */
    public static Optional<Map.Entry<Backend, String>> arrayOf(Path folder) {
        return named(folder, "array_job_id");
    }

    /** The backend the folder's {@value #QUEUE_FILE} names, with its field {@code field}; empty without either. */
    private static Optional<Map.Entry<Backend, String>> named(Path folder, String field) {
        try {
            Path f = folder.resolve(QUEUE_FILE);
            if (!Files.isRegularFile(f)) {
                return Optional.empty();
            }
            JsonNode o = Json.read(f);
            String value = o.path(field).asString("");
            return value.isEmpty() ? Optional.empty() : Backends.named(o.path("backend").asString("")).map(b -> Map.entry(b, value));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Why a queued run's job ended before its runjob started, as its scheduler recorded it; empty when it was withdrawn or no one can say. */
    static Optional<String> unstarted(Path folder, Map<String, String> env) {
        return of(folder).flatMap(q -> queueOf(q.getKey()).unstarted(q.getValue(), env));
    }

    /** What the scheduler says of a queued run whose runjob is not (or not yet) on this machine; empty when it no longer has it. */
    static Optional<String> state(Path folder, Map<String, String> env) {
        return of(folder).flatMap(q -> queueOf(q.getKey()).state(q.getValue(), env));
    }

    /** True when the folder's queued job runs again after more restarts than {@code restartsSeen} ({@link BatchQueue#runsAgain}). */
    static boolean runsAgain(Path folder, int restartsSeen, Map<String, String> env) {
        return of(folder).map(q -> queueOf(q.getKey()).runsAgain(q.getValue(), restartsSeen, env)).orElse(false);
    }
}
