package org.runjob.cli;

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
import org.runjob.node.Backend;
import org.runjob.plan.RunId;
import org.runjob.spec.JobSpec;
import org.runjob.spec.SpecLoader;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code runjob submit FILE} for a backend with a queue of its own ({@link Backend#queue}: Slurm's
 * sbatch). The run folder is made here, under the job's {@code logs.dir}, which the compute nodes
 * must see (a shared filesystem); the job is queued with this runjob (its java and content-pinned
 * jar) as the batch step's command, which runs the run inside the allocation it is given. Nothing
 * stays on this machine. The folder's {@value #QUEUE_FILE} names the backend and the job id, so
 * {@code runs}, {@code status} and {@code stop} ask the scheduler about a run whose runjob lives
 * elsewhere. A requeued job (preemption, {@code --requeue}) starts the same coordinator again, which
 * goes on with the same run as its next attempt ({@link Requeued}).
 */
final class QueuedRun {

    static final String QUEUE_FILE = "queued.json";
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String SCRIPT = "#!/bin/sh\n# runjob's batch step: the coordinator's argv comes as arguments\nexec \"$@\"\n";

    private QueuedRun() {
    }

    static int submit(Io io, SpecLoader.Loaded loaded, Backend backend, List<String> args) throws IOException {
        JobSpec spec = loaded.spec();
        String runId = RunId.of(io.clock().instant(), io.random().getAsInt());
        Path logs = Path.of(spec.logsDir()).toAbsolutePath().normalize();
        Path folder = logs.resolve(spec.name()).resolve(runId);
        Files.createDirectories(folder);
        Path job = folder.resolve(Submission.JOB_FILE);
        Path script = folder.resolve("submit.sh");
        // the nodes see this machine's files where they are (a shared filesystem)
        Files.writeString(job, JSON.writeValueAsString(Submit.handedJob(loaded, f -> f.source().toAbsolutePath().toString())));
        Files.writeString(script, SCRIPT);
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        List<String> coordinator = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"), "-cp", Detach.classPath(),
                Main.class.getName(), "run", job.toString(), "--run-id", runId, "--continue-requeued", "--set", "logs.dir=" + logs, "--"));
        coordinator.addAll(args);
        List<String> queue;
        try {
            queue = backend.queue(spec, folder, script, coordinator).orElseThrow();
        } catch (IllegalArgumentException e) {
            io.err().println("runjob: " + e.getMessage());
            RunJob.removeRefused(folder);
            return ExitCode.INVALID;
        }
        ProcessBuilder pb = new ProcessBuilder(queue).redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(io.env());
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        int code;
        try {
            code = p.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            code = -1;
        }
        String jobId = out.lines().reduce((a, b) -> b).orElse("").split(";")[0].trim();
        if (code != 0 || !jobId.matches("\\d+")) {
            io.err().println("runjob: " + backend.name() + " refused the run: " + out);
            RunJob.removeRefused(folder);
            return ExitCode.PREFLIGHT_FAILED;
        }
        Files.writeString(folder.resolve(QUEUE_FILE), JSON.writeValueAsString(JSON.createObjectNode()
                .put("backend", backend.name()).put("job_id", jobId)));
        RunIndex.add(io, RunIndex.Entry.here(runId, spec.name(), io.clock().instant(), folder));
        io.err().println("runjob: run " + runId + " is queued as " + backend.name() + " job " + jobId + "; its folder is " + folder
                + " (the nodes must see it); this machine may now go");
        Jobs.handedOver(io, runId, "");
        return ExitCode.OK;
    }


    /** The backend and job id a queued run's folder names, if it is one. */
    static Optional<Map.Entry<Backend, String>> of(Path folder) {
        try {
            Path f = folder.resolve(QUEUE_FILE);
            if (!Files.isRegularFile(f)) {
                return Optional.empty();
            }
            JsonNode o = JSON.readTree(Files.readString(f));
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
