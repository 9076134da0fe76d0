package org.runjob.runs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.runjob.json.Json;
import org.runjob.logs.Coordinator;
import org.runjob.node.Backend;
import org.runjob.node.BatchQueue;
import org.runjob.plan.RunId;
import org.runjob.plan.ShellWords;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.Jobs;
import org.runjob.run.Quarantined;
import org.runjob.run.RunIndex;
import org.runjob.run.RunJob;
import org.runjob.spec.JobSpec;
import org.runjob.spec.SpecLoader;
import org.runjob.spec.Sweep;

/**
 * {@code runjob submit} of a job with a sweep, for a backend with a queue: one job array where
 * every point asks for the same allocation, else one queued run per point ({@link QueuedRun}
 * queues each); every point's run has a folder of its own that names the sweep.
 */
final class QueuedSweep {

    /** How long withdrawn runs are given to leave the queue (a started one stops first) before their folders go. */
    private static final long WITHDRAW_WAIT_S = 60;

    private QueuedSweep() {
    }

    /** What a placeholder stands for in {@link #dryRunSweep}'s command: the sweep's folder, as yet unmade. */
    static final String SWEEP_FOLDER_PLACEHOLDER = "SWEEP_FOLDER";

    /**
     * {@code runjob submit --dry-run} of a sweep: the job array {@link #submitSweep} would queue
     * (with {@value #SWEEP_FOLDER_PLACEHOLDER} for the sweep's folder), or, where its points cannot
     * be one array, why, and the first run's job ({@link QueuedRun#dryRun}).
     */
    static int dryRunSweep(Io io, String file, List<String> sets, List<String> args, SpecLoader.Loaded first, Backend backend,
                           Optional<Integer> maxParallel) throws IOException {
        BatchQueue batch = QueuedRun.queueOf(backend);
        int size = first.sweep().orElseThrow().size();
        Optional<Points> loaded = points(io, file, sets, args, size, backend, maxParallel);
        if (loaded.isEmpty()) {
            return ExitCode.INVALID;
        }
        List<SpecLoader.Loaded> points = loaded.get().points();
        Optional<String> apart = loaded.get().apart();
        if (apart.isPresent()) {
            io.out().println("# a sweep of " + size + " runs: one batch job each (" + apart.get() + ")"
                    + maxParallel.map(k -> ", at most " + k + " at once: run N waits for run N-" + k + " in lane N mod " + k).orElse("")
                    + "; the first run's:");
            return QueuedRun.dryRun(io, points.get(0), backend, args, lane("sweep-ID", 0, maxParallel));
        }
        JobSpec spec = points.get(0).spec();
        Path logs = QueuedRun.logsOf(spec);
        Path scratch = Files.createTempDirectory("runjob-submit-dry-");
        try {
            Path folder = Files.createDirectory(scratch.resolve(SWEEP_FOLDER_PLACEHOLDER));
            List<String> run = new ArrayList<>(List.of("run", folder.resolve(ARRAY_FILE).toString(), "--array-task", "--continue-requeued",
                    "--set", "logs.dir=" + logs, "--"));
            run.addAll(args);
            List<String> queue = batch.submitArray(spec, folder, folder.resolve(QueuedRun.BATCH_SCRIPT), Detach.runjob(run),
                    Quarantined.machines(io, spec), size, maxParallel, io.env()).orElseThrow();
            io.out().println("# a sweep of " + size + " runs as one job array; runjob submit runs, once it made a folder per run and the sweep's "
                    + logs.resolve(spec.name()).resolve("sweep-ID") + " (" + SWEEP_FOLDER_PLACEHOLDER + " below):");
            io.out().println((ShellWords.join(queue) + " ").replace(scratch + "/", "").replace("/" + SWEEP_FOLDER_PLACEHOLDER + " ", "/sweep-ID ")
                    .stripTrailing());
            QueuedRun.printHostfile(io, folder, SWEEP_FOLDER_PLACEHOLDER);
            io.out().println("# " + SWEEP_FOLDER_PLACEHOLDER + "/" + ARRAY_FILE + " names each task's run (task N: point N);"
                    + " " + SWEEP_FOLDER_PLACEHOLDER + "/" + QueuedRun.BATCH_SCRIPT + ", the batch script (the coordinator's argv comes as its arguments):");
            io.out().print(QueuedRun.script(spec, batch.scriptHeader(queue)).replace(scratch + "/", "").replace("/" + SWEEP_FOLDER_PLACEHOLDER + "\n", "/sweep-ID\n"));
            io.out().flush();
            return ExitCode.OK;
        } finally {
            RunJob.removeRefused(scratch);
        }
    }

    /** The table a job array's tasks read their run from ({@link #ARRAY_FILE}), in the sweep's folder. */
    public static final String ARRAY_FILE = "array.json";

    /**
     * Queues the job's sweep, each point a run with a folder of its own that names the sweep
     * ({@link SweepRecord}), so {@code runs} groups them and {@code stop SWEEP} stops them; prints
     * their run ids. Where the backend runs job arrays and every point asks for the same
     * allocation, the sweep is one array ({@link #queueArray}), at most {@code maxParallel} tasks
     * at once; otherwise each point is a job of its own, point i in lane i mod {@code maxParallel}
     * ({@link #lane}), where the queue has lanes. When one cannot be queued, those already queued
     * are withdrawn: the sweep is queued whole or not at all.
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
        if (!LoginCheck.passes(io, points.stream().map(SpecLoader.Loaded::spec).toList(), QueuedRun.queueOf(backend))) {
            return ExitCode.PREFLIGHT_FAILED;
        }
        Optional<String> apart = loaded.get().apart();
        if (apart.isEmpty()) {
            return queueArray(io, id, points, backend, args, maxParallel);
        }
        List<QueuedRun.Queued> queued = new ArrayList<>();
        for (int i = 0; i < sweep.size(); i++) {
            int code = QueuedRun.queue(io, points.get(i), backend, args, Optional.of(
                    new SweepRecord(id, first.spec().name(), i, sweep.size(), sweep.point(i), Coordinator.current())),
                    lane(id, i, maxParallel), queued);
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
                + ", so not as one job array" + maxParallel.map(k -> "; at most " + k + " at once: run N waits for run N-" + k).orElse("")
                + "); runjob runs lists them, runjob stop " + id + " stops them all; this machine may now go");
        return ExitCode.OK;
    }

    /**
     * The lane of point {@code i} of sweep {@code id} held to {@code maxParallel} K ({@link BatchQueue#inLane}):
     * {@code ID.laneM} for M = i mod K, so run i starts once run i-K has ended; none without a limit.
     */
    static Optional<String> lane(String id, int i, Optional<Integer> maxParallel) {
        return maxParallel.map(k -> id + ".lane" + (i % k));
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
        if (apart.isPresent() && maxParallel.isPresent() && !QueuedRun.queueOf(backend).lanes()) {
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
                Optional<List<String>> argv = QueuedRun.queueOf(backend).submitArray(spec, scratch, scratch.resolve(QueuedRun.BATCH_SCRIPT), List.of(),
                        Quarantined.machines(io, spec), points.size(), maxParallel, io.env());
                if (argv.isEmpty()) {
                    return Optional.of(backend.name() + " runs no job array of this job's allocation");
                }
                List<String> key = new ArrayList<>(argv.get());
                key.add(QueuedRun.script(spec));
                key.add(QueuedRun.logsOf(spec).toString());
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
     * The sweep as one job array: a folder per point (as {@link QueuedRun#queue} makes one), and the sweep's
     * own folder beside them ({@code LOGS/JOB/SWEEP/}) with the batch script, the tasks' scheduler
     * output and {@value #ARRAY_FILE}, from which each task's coordinator takes its run by the
     * task's index ({@code run ARRAY_FILE --array-task}). Each run's {@value QueuedRun#QUEUE_FILE} names its
     * task's job id and the command that would queue it alone ({@code submit --resume}).
     */
    private static int queueArray(Io io, String id, List<SpecLoader.Loaded> points, Backend backend, List<String> args,
                                  Optional<Integer> maxParallel) throws IOException {
        BatchQueue batch = QueuedRun.queueOf(backend);
        JobSpec first = points.get(0).spec();
        Sweep sweep = points.get(0).sweep().orElseThrow();
        for (SpecLoader.Loaded point : points) {
            // a quarantined node the job names fails here, before anything is queued
            if (Quarantined.avoid(io, point.spec()).isEmpty()) {
                return ExitCode.PREFLIGHT_FAILED;
            }
        }
        List<QueuedRun.Prepared> runs = new ArrayList<>();
        Path logs = QueuedRun.logsOf(first);
        Path folder = logs.resolve(first.name()).resolve(id);
        boolean queuedAll = false;
        try {
            for (int i = 0; i < points.size(); i++) {
                runs.add(QueuedRun.prepare(io, points.get(i), args, Optional.of(
                        new SweepRecord(id, first.name(), i, points.size(), sweep.point(i), Coordinator.current()))));
            }
            Files.createDirectory(folder, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
            var table = Json.MAPPER.createObjectNode().put("sweep", id).put("task_variable", batch.arrayTaskVariable());
            var list = table.putArray("runs");
            for (int i = 0; i < runs.size(); i++) {
                list.addObject().put("task", i).put("run_id", runs.get(i).runId()).put("job", runs.get(i).job().toString());
            }
            Path arrayFile = folder.resolve(ARRAY_FILE);
            Files.writeString(arrayFile, Json.MAPPER.writeValueAsString(table));
            Path script = QueuedRun.writeScript(folder, first);
            List<String> run = new ArrayList<>(List.of("run", arrayFile.toString(), "--array-task", "--continue-requeued",
                    "--set", "logs.dir=" + logs, "--"));
            run.addAll(args);
            List<String> queue = batch.submitArray(first, folder, script, Detach.runjob(run), Quarantined.machines(io, first),
                    points.size(), maxParallel, io.env()).orElseThrow();
            Files.writeString(script, QueuedRun.script(first, batch.scriptHeader(queue)));
            QueuedRun.Ran ran = QueuedRun.run(io, queue);
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
                    QueuedRun.Prepared r = runs.get(i);
                    List<String> alone = batch.submit(r.spec(), r.folder(), r.script(), r.coordinator(),
                            Quarantined.machines(io, r.spec()), io.env());
                    Files.writeString(r.script(), QueuedRun.script(r.spec(), batch.scriptHeader(alone)));
                    QueuedRun.writeRecord(r.folder(), backend, batch.arrayTask(arrayId.get(), i), alone, List.of(), arrayId);
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
    private static void withdraw(Io io, Backend backend, List<QueuedRun.Queued> queued) {
        BatchQueue batch = QueuedRun.queueOf(backend);
        queued.forEach(q -> batch.cancel(q.jobId(), true, io.env()));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WITHDRAW_WAIT_S);
        for (QueuedRun.Queued q : queued) {
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
}
