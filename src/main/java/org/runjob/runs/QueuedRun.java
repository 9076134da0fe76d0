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

import org.runjob.backends.Backends;
import org.runjob.json.Json;
import org.runjob.node.Backend;
import org.runjob.node.BatchQueue;
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
        if (!LoginCheck.passes(io, List.of(loaded.spec()), queueOf(backend))) {
            return ExitCode.PREFLIGHT_FAILED;
        }
        List<Queued> queued = new ArrayList<>();
        int code = queue(io, loaded, backend, args, Optional.empty(), Optional.empty(), queued);
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
        return dryRun(io, loaded, backend, args, Optional.empty());
    }

    /** As {@link #dryRun(Io, SpecLoader.Loaded, Backend, List)}, the run queued in {@code lane} when given ({@link BatchQueue#inLane}). */
    static int dryRun(Io io, SpecLoader.Loaded loaded, Backend backend, List<String> args, Optional<String> lane) throws IOException {
        BatchQueue batch = queueOf(backend);
        JobSpec spec = loaded.spec();
        Path logs = Path.of(spec.logsDir()).toAbsolutePath().normalize();
        Path scratch = Files.createTempDirectory("runjob-submit-dry-");
        try {
            Path folder = scratch.resolve(FOLDER_PLACEHOLDER);
            Files.createDirectory(folder);
            List<String> queue;
            try {
                queue = inLane(batch, batch.submit(spec, folder, folder.resolve(BATCH_SCRIPT),
                        coordinator(folder.resolve(Submission.JOB_FILE), RUN_ID_PLACEHOLDER, logs, Optional.empty(), args),
                        Quarantined.machines(io, spec), io.env()), folder.resolve(BATCH_SCRIPT), lane);
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

    static void printHostfile(Io io, Path folder, String placeholder) throws IOException {
        Path hostfile = folder.resolve("hostfile");
        if (Files.isRegularFile(hostfile)) {
            io.out().println("# " + placeholder + "/hostfile, one line per task:");
            Files.readAllLines(hostfile).forEach(l -> io.out().println("#   " + l));
        }
    }

    /** The coordinator's argv: this runjob's java, flags and content-pinned jar, running the handed job in its run folder. */
    static List<String> coordinator(Path job, String runId, Path logs, Optional<SweepRecord> sweep, List<String> args)
            throws IOException {
        List<String> run = new ArrayList<>(List.of("run", job.toString(), "--run-id", runId,
                "--continue-requeued", "--set", "logs.dir=" + logs));
        sweep.ifPresent(w -> run.addAll(List.of("--sweep-point", Integer.toString(w.point()))));
        run.add("--");
        run.addAll(args);
        return Detach.runjob(run);
    }

    /**
     * A run's folder made for the queue: its job ({@value Submission#JOB_FILE}), batch script and
     * sweep record written, and the argv of the coordinator that runs it; nothing queued yet.
     */
    record Prepared(JobSpec spec, String runId, Path folder, Path job, Path script, List<String> coordinator) {
    }

    /** Makes {@code loaded}'s run folder under its logs dir ({@link Prepared}). */
    static Prepared prepare(Io io, SpecLoader.Loaded loaded, List<String> args, Optional<SweepRecord> sweep) throws IOException {
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

    static Path logsOf(JobSpec spec) {
        return Path.of(spec.logsDir()).toAbsolutePath().normalize();
    }

    static Path writeScript(Path folder, JobSpec spec) throws IOException {
        Path script = folder.resolve(BATCH_SCRIPT);
        Files.writeString(script, script(spec));
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        return script;
    }

    /**
     * Queues {@code loaded} as one run (of {@code sweep}, when given; in {@code lane}, when given:
     * {@link BatchQueue#inLane}), added to {@code queued}; the exit code.
     */
    static int queue(Io io, SpecLoader.Loaded loaded, Backend backend, List<String> args, Optional<SweepRecord> sweep,
                     Optional<String> lane, List<Queued> queued) throws IOException {
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
            queue = inLane(batch, batch.submit(spec, folder, run.script(), run.coordinator(), Quarantined.machines(io, spec), io.env()),
                    run.script(), lane);
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
     * The folder's {@value #QUEUE_FILE}: the backend, the job id, the command that queues the run
     * as a job of its own (what {@link QueuedResume#resume} runs), the jobs before it, if any, and the job
     * array it is a task of, if it is one ({@code array_job_id}).
     */
    static void writeRecord(Path folder, Backend backend, String jobId, List<String> command, List<String> earlier,
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
    record Ran(int code, String out) {
        /** The job id the queue command printed, when it exited 0 and queued one ({@link BatchQueue#jobId}). */
        Optional<String> jobId(BatchQueue queue) {
            return code == 0 ? queue.jobId(out) : Optional.empty();
        }
    }

    /** Runs a queue command with runjob's environment and nothing on its stdin. */
    static Ran run(Io io, List<String> queue) throws IOException {
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

    /**
     * {@code command} in {@code lane} when one is given ({@link BatchQueue#inLane}).
     *
     * @throws IllegalArgumentException where the queue cannot hold the job back in a lane
     */
    private static List<String> inLane(BatchQueue batch, List<String> command, Path script, Optional<String> lane) {
        if (lane.isEmpty()) {
            return command;
        }
        return batch.inLane(command, script, lane.get())
                .orElseThrow(() -> new IllegalArgumentException("this queue cannot hold a run back behind others (--max-parallel)"));
    }

    /** The batch queue of {@code backend}, which a queued run's backend has (submit queues only where there is one). */
    static BatchQueue queueOf(Backend backend) {
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
