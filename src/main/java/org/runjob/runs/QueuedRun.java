package org.runjob.runs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.runjob.backends.Backends;
import org.runjob.json.Json;
import org.runjob.logs.Coordinator;
import org.runjob.node.Backend;
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
        JobSpec spec = loaded.spec();
        Path logs = Path.of(spec.logsDir()).toAbsolutePath().normalize();
        Path scratch = Files.createTempDirectory("runjob-submit-dry-");
        try {
            Path folder = scratch.resolve(FOLDER_PLACEHOLDER);
            Files.createDirectory(folder);
            List<String> queue;
            try {
                queue = backend.queue(spec, folder, folder.resolve(BATCH_SCRIPT),
                        coordinator(folder.resolve(Submission.JOB_FILE), RUN_ID_PLACEHOLDER, logs, Optional.empty(), args),
                        Quarantined.machines(io, spec)).orElseThrow();
            } catch (IllegalArgumentException e) {
                io.err().println("runjob: " + e.getMessage());
                return ExitCode.INVALID;
            }
            String where = scratch.toString() + "/";
            io.out().println("# runjob submit runs, once it made the run folder " + logs.resolve(spec.name()).resolve(RUN_ID_PLACEHOLDER)
                    + " (" + FOLDER_PLACEHOLDER + " below):");
            io.out().println(ShellWords.join(queue).replace(where, ""));
            Path hostfile = folder.resolve("hostfile");
            if (Files.isRegularFile(hostfile)) {
                io.out().println("# " + FOLDER_PLACEHOLDER + "/hostfile, one line per task:");
                Files.readAllLines(hostfile).forEach(l -> io.out().println("#   " + l));
            }
            io.out().println("# " + FOLDER_PLACEHOLDER + "/" + BATCH_SCRIPT + ", the batch script (the coordinator's argv comes as its arguments):");
            io.out().print(script(spec));
            io.out().flush();
            return ExitCode.OK;
        } finally {
            RunJob.removeRefused(scratch);
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

    /**
     * Queues each point of the job's sweep as a run and a job of its own (the scheduler runs them
     * as it has room, as a job array would), each run's folder naming the sweep ({@link SweepRecord}),
     * so {@code runs} groups them and {@code stop SWEEP} stops them. Prints their run ids. When one
     * cannot be queued, those already queued are withdrawn: the sweep is queued whole or not at all.
     */
    static int submitSweep(Io io, String file, List<String> sets, List<String> args, SpecLoader.Loaded first, Backend backend)
            throws IOException {
        Sweep sweep = first.sweep().orElseThrow();
        String id = SweepRecord.PREFIX + RunId.of(io.clock().instant(), io.random().getAsInt());
        List<Queued> queued = new ArrayList<>();
        for (int i = 0; i < sweep.size(); i++) {
            SpecLoader.Loaded point = Jobs.load(io, file, sets, args, i);
            int code = point == null ? ExitCode.INVALID : queue(io, point, backend, args, Optional.of(
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
                + " jobs " + queued.get(0).jobId() + "-" + queued.get(queued.size() - 1).jobId() + "; runjob runs lists them, runjob stop "
                + id + " stops them all; this machine may now go");
        return ExitCode.OK;
    }

    /**
     * Cancels the queued runs and, once their jobs have left the queue (a run that had started
     * stops first and may have written to its folder), removes their folders.
     */
    private static void withdraw(Io io, Backend backend, List<Queued> queued) {
        queued.forEach(q -> backend.cancel(q.jobId(), true, io.env()));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WITHDRAW_WAIT_S);
        for (Queued q : queued) {
            while (backend.queued(q.jobId(), io.env()).isPresent() && System.nanoTime() < deadline) {
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

    /** Queues {@code loaded} as one run (of {@code sweep}, when given), added to {@code queued}; the exit code. */
    private static int queue(Io io, SpecLoader.Loaded loaded, Backend backend, List<String> args, Optional<SweepRecord> sweep,
                             List<Queued> queued) throws IOException {
        JobSpec spec = loaded.spec();
        Path logs = Path.of(spec.logsDir()).toAbsolutePath().normalize();
        String runId = RunIds.claim(io, logs.resolve(spec.name()));
        Path folder = logs.resolve(spec.name()).resolve(runId);
        if (sweep.isPresent()) {
            sweep.get().write(folder);
        }
        Path job = folder.resolve(Submission.JOB_FILE);
        Path script = folder.resolve(BATCH_SCRIPT);
        // the nodes see this machine's files where they are (a shared filesystem)
        Files.writeString(job, JSON.writeValueAsString(Submit.handedJob(loaded, f -> f.source().toAbsolutePath().toString())));
        Files.writeString(script, script(spec));
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        // the coordinator: this runjob's java, flags (heap, collector, class-data archive) and content-pinned jar
        List<String> coordinator = coordinator(job, runId, logs, sweep, args);
        // a quarantined node the job names fails here, before anything is queued; Slurm keeps counted nodes off them
        if (Quarantined.avoid(io, spec).isEmpty()) {
            RunJob.removeRefused(folder);
            return ExitCode.PREFLIGHT_FAILED;
        }
        List<String> queue;
        try {
            queue = backend.queue(spec, folder, script, coordinator, Quarantined.machines(io, spec)).orElseThrow();
        } catch (IllegalArgumentException e) {
            io.err().println("runjob: " + e.getMessage());
            RunJob.removeRefused(folder);
            return ExitCode.INVALID;
        }
        Ran ran = run(io, queue);
        if (ran.code() == 0 && queue.contains("--test-only")) {
            // slurm.alloc_args asked Slurm only whether and when it would run: nothing is queued
            io.err().println("runjob: " + backend.name() + " was asked only whether it would run the job (--test-only), and said: " + ran.out());
            RunJob.removeRefused(folder);
            return ExitCode.OK;
        }
        Optional<String> queuedAs = ran.jobId();
        if (queuedAs.isEmpty()) {
            io.err().println("runjob: " + backend.name() + " refused the run: " + ran.out());
            RunJob.removeRefused(folder);
            return ExitCode.PREFLIGHT_FAILED;
        }
        String jobId = queuedAs.get();
        writeRecord(folder, backend, jobId, queue, List.of());
        RunIndex.add(io, RunIndex.Entry.here(runId, spec.name(), io.clock().instant(), folder));
        io.err().println("runjob: run " + runId + " is queued as " + backend.name() + " job " + jobId + "; its folder is " + folder
                + " (the nodes must see it)" + backend.queuedOutput(folder, jobId).map(o -> ", the batch job's own output " + o).orElse("")
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
    public static int resume(Io io, RunRecords.Run run) throws IOException {
        Optional<Map.Entry<Backend, String>> queued = of(run.folder());
        if (queued.isEmpty()) {
            io.err().println("runjob: run " + run.runId() + " was not queued with a scheduler: runjob resume " + run.runId() + " continues it");
            return ExitCode.INVALID;
        }
        if (run.live()) {
            io.err().println("runjob: run " + run.runId() + " is " + run.state() + ": it has not ended (runjob stop " + run.runId() + " ends it)");
            return ExitCode.INVALID;
        }
        JsonNode record = Json.read(run.folder().resolve(QUEUE_FILE));
        List<String> command = new ArrayList<>();
        record.path("command").forEach(w -> command.add(w.asString()));
        if (command.isEmpty()) {
            io.err().println("runjob: run " + run.runId() + " was queued before runjob kept the command it was queued with: submit its job again");
            return ExitCode.INVALID;
        }
        Backend backend = queued.get().getKey();
        Ran ran = run(io, command);
        Optional<String> jobId = ran.jobId();
        if (jobId.isEmpty()) {
            io.err().println("runjob: " + backend.name() + " refused the run: " + ran.out());
            return ExitCode.PREFLIGHT_FAILED;
        }
        List<String> earlier = new ArrayList<>();
        record.path("earlier_job_ids").forEach(w -> earlier.add(w.asString()));
        earlier.add(queued.get().getValue());
        writeRecord(run.folder(), backend, jobId.get(), command, earlier);
        io.err().println("runjob: run " + run.runId() + " is queued again as " + backend.name() + " job " + jobId.get()
                + ": it goes on as its next attempt in " + run.folder() + "; this machine may now go");
        io.out().println(run.runId());
        io.out().flush();
        return ExitCode.OK;
    }

    /** The folder's {@value #QUEUE_FILE}: the backend, the job id, the command that queued it, and the jobs before it, if any. */
    private static void writeRecord(Path folder, Backend backend, String jobId, List<String> command, List<String> earlier) throws IOException {
        var record = JSON.createObjectNode().put("backend", backend.name()).put("job_id", jobId);
        command.forEach(record.putArray("command")::add);
        if (!earlier.isEmpty()) {
            earlier.forEach(record.putArray("earlier_job_ids")::add);
        }
        Files.writeString(folder.resolve(QUEUE_FILE), JSON.writeValueAsString(record));
    }

    /** A queue command's exit status and output (stdout and stderr, trimmed). */
    private record Ran(int code, String out) {
        /** The job id it printed ({@code sbatch --parsable}: "ID" or "ID;CLUSTER" on its last line), when it queued one. */
        Optional<String> jobId() {
            String id = out.lines().reduce((a, b) -> b).orElse("").split(";")[0].trim();
            return code == 0 && id.matches("\\d+") ? Optional.of(id) : Optional.empty();
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

    /** The backend and job id a queued run's folder names, if it is one. */
    public static Optional<Map.Entry<Backend, String>> of(Path folder) {
        try {
            Path f = folder.resolve(QUEUE_FILE);
            if (!Files.isRegularFile(f)) {
                return Optional.empty();
            }
            JsonNode o = Json.read(f);
            return Backends.named(o.path("backend").asString("")).map(b -> Map.entry(b, o.path("job_id").asString("")));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Why a queued run's job ended before its runjob started, as its scheduler recorded it; empty when it was withdrawn or no one can say. */
    static Optional<String> unstarted(Path folder, Map<String, String> env) {
        return of(folder).flatMap(q -> q.getKey().unstarted(q.getValue(), env));
    }

    /** What the scheduler says of a queued run whose runjob is not (or not yet) on this machine; empty when it no longer has it. */
    static Optional<String> state(Path folder, Map<String, String> env) {
        return of(folder).flatMap(q -> q.getKey().queued(q.getValue(), env));
    }
}
