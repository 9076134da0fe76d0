package org.runjob.runs;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.LinkOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.runjob.json.Json;
import org.runjob.node.Backend;
import org.runjob.node.BatchQueue;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.Jobs;
import org.runjob.run.Quarantined;
import org.runjob.spec.SpecLoader;

import tools.jackson.databind.JsonNode;

/** {@code runjob submit --resume RUN}: a queued run that ended, queued again as its next attempt ({@link #resume}). */
final class QueuedResume {

    /** The lock file {@link #resume} holds while it queues a run again. */
    private static final String RESUME_LOCK = ".resume.lock";

    private QueuedResume() {
    }

    /**
     * {@code runjob submit --resume RUN}: queues a submitted run that ended as its next attempt, by
     * running again the command it was queued with ({@code queued.json}'s {@code command}): the same
     * run id, folder and coordinator, whose start goes on from the attempts the folder holds, as a
     * requeued job's does. The folder's {@value QueuedRun#QUEUE_FILE} then names the new job (the earlier
     * ones under {@code earlier_job_ids}). Refused, changing nothing: a run still queued or running,
     * one not queued with a scheduler, one queued before runjob kept the command, and one whose
     * environments fail on this machine as a submit's do ({@link LoginCheck}).
     */
    public static int resume(Io io, RunRecords.Run given) throws IOException {
        Optional<Map.Entry<Backend, String>> queued = QueuedRun.of(given.folder());
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

    private static int resumeLocked(Io io, RunRecords.Run run, Map.Entry<Backend, String> queued) throws IOException {
        if (run.live()) {
            io.err().println("runjob: run " + run.runId() + " is " + run.state() + ": it has not ended (runjob stop " + run.runId() + " ends it)");
            return ExitCode.INVALID;
        }
        JsonNode record = Json.read(run.folder().resolve(QueuedRun.QUEUE_FILE));
        List<String> kept = new ArrayList<>();
        record.path("command").forEach(w -> kept.add(w.asString()));
        if (kept.isEmpty()) {
            io.err().println("runjob: run " + run.runId() + " was queued before runjob kept the command it was queued with: submit its job again");
            return ExitCode.INVALID;
        }
        Backend backend = queued.getKey();
        BatchQueue batch = QueuedRun.queueOf(backend);
        // the environments are checked again: a module or image may have gone since the first submit
        SpecLoader.Loaded loaded = Jobs.load(io, run.folder().resolve(Submission.JOB_FILE).toString(), List.of());
        if (loaded == null) {
            return ExitCode.INVALID;
        }
        if (!LoginCheck.passes(io, List.of(loaded.spec()), batch)) {
            return ExitCode.PREFLIGHT_FAILED;
        }
        // counted nodes keep off the nodes quarantined now, not those of the first submit
        JsonNode job = Json.read(run.folder().resolve(Submission.JOB_FILE));
        boolean avoids = job.path("failure").path("quarantine_s").asLong(1) != 0;
        List<String> command = batch.again(kept, run.folder().resolve(QueuedRun.BATCH_SCRIPT), avoids ? Quarantined.machines(io) : Set.of());
        QueuedRun.Ran ran = QueuedRun.run(io, command);
        Optional<String> jobId = ran.jobId(batch);
        if (jobId.isEmpty()) {
            io.err().println("runjob: " + backend.name() + " refused the run: " + ran.out());
            return ExitCode.PREFLIGHT_FAILED;
        }
        List<String> earlier = new ArrayList<>();
        record.path("earlier_job_ids").forEach(w -> earlier.add(w.asString()));
        earlier.add(queued.getValue());
        QueuedRun.writeRecord(run.folder(), backend, jobId.get(), command, earlier, Optional.empty());
        io.err().println("runjob: run " + run.runId() + " is queued again as " + backend.name() + " job " + jobId.get()
                + ": it goes on as its next attempt in " + run.folder() + "; this machine may now go");
        io.out().println(run.runId());
        io.out().flush();
        return ExitCode.OK;
    }
}
