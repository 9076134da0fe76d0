package org.runjob.slurm;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.node.NodeException;

/**
 * The job's Slurm allocation, from {@code salloc ... sh -c HOLD} to the run's exit code, which
 * that command exits with, so Slurm's record says COMPLETED or FAILED ({@link #close(int)}); or, when runjob
 * runs inside an allocation of the user's, that one ({@link #existing}), which runjob never ends. As soon as Slurm
 * names the job (pending or granted), a guard process in its own session holds a pipe from
 * runjob and cancels the job when that pipe closes: runjob ending in any way, SIGKILL included,
 * releases the allocation, as {@link #close} does on the normal path.
 */
final class Allocation implements AutoCloseable {

    private static final Logger LOG = LogManager.getLogger(Allocation.class);
    private static final Pattern JOB = Pattern.compile("job allocation (\\d+)");
    private static final long QUEUED_QUIET_MS = 2000;
    /** How long salloc may take to end the job once told the run's exit code. */
    private static final int RELEASE_S = 60;
    /** Reads one line (or the end of its stdin), then cancels the job named by its argument. */
    static final String GUARD = "read line || :; exec scancel --quiet \"$1\"";

    private final String jobId;
    private final Map<String, String> env;
    private final Process guard;
    /** The salloc that holds the allocation (its command waits for the run's exit code); null when borrowed. */
    private final Process salloc;
    /** True for an allocation runjob did not make (it runs inside the user's salloc or sbatch): never cancelled. */
    private final boolean borrowed;
    /** True for an allocation held by a batch job's script ({@link SlurmCommands#BATCH_HOLD}), ended by a signal to it. */
    private final boolean batch;

    private Allocation(String jobId, Map<String, String> env, Process guard, Process salloc) {
        this(jobId, env, guard, salloc, false, false);
    }

    private Allocation(String jobId, Map<String, String> env, Process guard, Process salloc, boolean borrowed, boolean batch) {
        this.jobId = jobId;
        this.env = env;
        this.guard = guard;
        this.salloc = salloc;
        this.borrowed = borrowed;
        this.batch = batch;
    }

    /**
     * The allocation runjob runs inside ({@code SLURM_JOB_ID} of the user's salloc or sbatch): its
     * steps go there, and it is never cancelled; its owner ends it, and its record says how.
     */
    static Allocation existing(String jobId, Map<String, String> env) {
        return new Allocation(jobId, env, null, null, true, false);
    }

    boolean borrowed() {
        return borrowed;
    }

    /**
     * Runs {@code salloc} and waits for the grant (a queued job waits here: its lines go to
     * {@code progress}).
     *
     * @throws NodeException with salloc's own error lines when it fails
     */
    static Allocation make(List<String> salloc, Map<String, String> env, Spawner spawner, Consumer<String> progress,
                           BooleanSupplier interrupted) throws NodeException {
        Process p;
        try {
            p = spawner.start(salloc, env, "TERM");
        } catch (IOException e) {
            throw new NodeException("cannot run salloc (is Slurm's client installed here?): " + e.getMessage(), e);
        }
        Waiting waiting = new Waiting(p, interrupted, progress);
        Optional<String> job = Optional.empty();
        Process guard = null;
        boolean granted = false;
        List<String> errors = new ArrayList<>();
        List<String> said = new ArrayList<>();
        BufferedReader err = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8));
        try {
            String line;
            while (!granted && (line = err.readLine()) != null) {
                LOG.info("salloc: {}", line);
                said.add(line.replaceFirst("^salloc: ", ""));
                Matcher m = JOB.matcher(line);
                if (m.find() && job.isEmpty()) {
                    job = Optional.of(m.group(1));
                    guard = guard(job.get(), env);
                }
                if (line.contains("Granted job allocation")) {
                    granted = true;
                } else if (line.contains("error")) {
                    errors.add(line.replaceFirst("^salloc: (error: )?", ""));
                } else if (line.contains("queued")) {
                    waiting.queued = line.replaceFirst("^salloc: ", "");
                }
            }
            if (!granted) {
                p.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (IOException e) {
            errors.add(e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            errors.add("interrupted");
        }
        if (job.isPresent() && granted && p.isAlive()) {
            waiting.granted = true;
            LOG.info("slurm job {} allocated", job.get());
            drain(err);
            return new Allocation(job.get(), env, guard, p);
        }
        p.destroyForcibly();
        if (job.isPresent()) {
            new Allocation(job.get(), env, guard, null).close(ExitCodeOf.FAILED);
        }
        if (waiting.withdrawn) {
            throw new NodeException("interrupted while waiting for the Slurm allocation" + job.map(j -> " (job " + j + ", cancelled)").orElse(""));
        }
        // Slurm's own words: its error lines, else whatever salloc said (an option it rejects prints no "error")
        List<String> words = errors.isEmpty() ? said.stream().filter(l -> !l.contains("job allocation")).toList() : errors;
        throw new NodeException("Slurm refused the allocation: " + (words.isEmpty() ? "salloc exited " + exitOf(p)
                : String.join("; ", words.subList(Math.max(0, words.size() - 5), words.size())) + " (salloc exited " + exitOf(p) + ")"));
    }

    /** How often a batch-held allocation's state is read while it waits to start, and once signalled to end. */
    private static final long POLL_MS = 100;

    /**
     * Queues {@code sbatch} (its {@code --parsable} job whose script holds the allocation,
     * {@link SlurmCommands#holdBatch}, with {@code submitEnv}: the hostfile's) and waits until the
     * job runs, reading its state from slurmctld: a job still pending after
     * {@value #QUEUED_QUIET_MS} ms is said to {@code progress} once, Ctrl-C withdraws it, and a job
     * that ends before it ran is a refusal.
     *
     * @param env runjob's environment, where the Slurm client commands that follow run
     * @throws NodeException with sbatch's words when it refused, or Slurm's record when the job ended unstarted
     */
    static Allocation batch(List<String> sbatch, Map<String, String> submitEnv, Map<String, String> env, Consumer<String> progress,
                            BooleanSupplier interrupted) throws NodeException {
        SlurmCommands.Ran ran;
        try {
            ran = SlurmCommands.run(sbatch, submitEnv);
        } catch (IOException e) {
            throw new NodeException("cannot run sbatch (is Slurm's client installed here?): " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NodeException("interrupted while queueing the Slurm allocation", e);
        }
        String id = ran.out().lines().reduce((a, b) -> b).orElse("").split(";")[0].trim();
        if (!ran.ok() || !id.matches("\\d+")) {
            throw new NodeException("Slurm refused the allocation: " + ran.out().strip().lines().reduce((a, b) -> a + "; " + b).orElse("sbatch exited "
                    + ran.code()) + " (sbatch exited " + ran.code() + ")");
        }
        LOG.info("slurm job {} queued to hold the allocation (a hostfile layout)", id);
        Process guard;
        try {
            guard = guard(id, env);
        } catch (IOException e) {
            new Allocation(id, env, null, null, false, true).cancel();
            throw new NodeException("cannot start the guard of Slurm job " + id + ": " + e.getMessage(), e);
        }
        Allocation allocation = new Allocation(id, env, guard, null, false, true);
        long pendingSince = System.nanoTime();
        boolean said = false;
        while (true) {
            Optional<String> record = SlurmCommands.job(id, env);
            String state = record.flatMap(r -> field(r, "JobState")).orElse("");
            if (state.equals("RUNNING")) {
                LOG.info("slurm job {} allocated", id);
                return allocation;
            }
            if (interrupted.getAsBoolean()) {
                allocation.cancel();
                throw new NodeException("interrupted while waiting for the Slurm allocation (job " + id + ", cancelled)");
            }
            if (!state.isEmpty() && !state.equals("PENDING") && !state.equals("CONFIGURING")) {
                allocation.cancel();
                throw new NodeException("Slurm ended job " + id + " before it ran: " + state
                        + record.flatMap(r -> field(r, "Reason")).filter(r -> !r.equals("None")).map(r -> " (" + r + ")").orElse(""));
            }
            if (!said && state.equals("PENDING") && System.nanoTime() - pendingSince >= TimeUnit.MILLISECONDS.toNanos(QUEUED_QUIET_MS)) {
                said = true;
                // as salloc says it, Slurm's reason in runjob.log
                LOG.info("slurm job {} pending: {}", id, record.flatMap(r -> field(r, "Reason")).orElse("?"));
                progress.accept("slurm: job " + id + " queued and waiting for resources (Ctrl-C withdraws it)");
            }
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                allocation.cancel();
                throw new NodeException("interrupted while waiting for the Slurm allocation (job " + id + ", cancelled)");
            }
        }
    }

    /** {@code KEY=VALUE} of a {@code scontrol show job} record, its first. */
    private static Optional<String> field(String record, String key) {
        Matcher m = Pattern.compile("(?:^|\\s)" + key + "=(\\S*)").matcher(record);
        return m.find() ? Optional.of(m.group(1)) : Optional.empty();
    }

    /**
     * Watches salloc while it waits, on one thread: says the job waits in the queue if it still
     * does {@link #QUEUED_QUIET_MS} after Slurm said so (Slurm grants most in under a second), and
     * withdraws the request (SIGTERM to salloc, which then cancels the job) when runjob is interrupted.
     */
    private static final class Waiting {
        /** salloc's "queued and waiting" line, once it printed one. */
        volatile String queued;
        volatile boolean withdrawn;
        /** Set at the grant: from then on a Ctrl-C is runjob's to handle (a graceful stop), not a withdrawal. */
        volatile boolean granted;

        Waiting(Process salloc, BooleanSupplier interrupted, Consumer<String> progress) {
            Thread t = new Thread(() -> {
                long seen = 0;
                boolean said = false;
                try {
                    while (!granted && !salloc.waitFor(100, TimeUnit.MILLISECONDS)) {
                        if (interrupted.getAsBoolean() && !granted) {
                            withdrawn = true;
                            salloc.destroy();
                            return;
                        }
                        if (queued != null && seen == 0) {
                            seen = System.nanoTime();
                        }
                        if (!said && seen != 0 && System.nanoTime() - seen >= TimeUnit.MILLISECONDS.toNanos(QUEUED_QUIET_MS)) {
                            said = true;
                            progress.accept("slurm: " + queued + " (Ctrl-C withdraws it)");
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "salloc-waiting");
            t.setDaemon(true);
            t.start();
        }
    }

    private static String exitOf(Process p) {
        return p.isAlive() ? "(still running)" : Integer.toString(p.exitValue());
    }

    private static Process guard(String jobId, Map<String, String> env) throws IOException {
        List<String> cmd = new ArrayList<>();
        if (Files.isExecutable(Path.of("/usr/bin/setsid"))) {
            cmd.add("/usr/bin/setsid");
        }
        cmd.addAll(List.of("sh", "-c", GUARD, "sh", jobId));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        pb.environment().clear();
        pb.environment().putAll(env);
        return pb.start();
    }

    String jobId() {
        return jobId;
    }

    /** salloc's lines after the grant (until it relinquishes the job), into runjob.log. */
    private static void drain(BufferedReader err) {
        Thread t = new Thread(() -> {
            try (err) {
                String line;
                while ((line = err.readLine()) != null) {
                    LOG.info("salloc: {}", line);
                }
            } catch (IOException e) {
                // salloc ended
            }
        }, "salloc-stderr");
        t.setDaemon(true);
        t.start();
    }

    /** Exit codes handed to {@link #close(int)} by the cluster when it knows no run's. */
    static final class ExitCodeOf {
        static final int FAILED = 1;

        private ExitCodeOf() {
        }
    }

    /** Ends the job as a failure: {@link #close(int)} with 1. */
    @Override
    public void close() {
        close(ExitCodeOf.FAILED);
    }

    /**
     * Ends the job with the run's exit code: salloc's command exits with it, so Slurm records
     * COMPLETED (0) or FAILED, and the job ends with its last step. If salloc does not end within
     * {@value #RELEASE_S} s, the job is cancelled (every step of it ends: Slurm signals what is
     * left, KILL after the cluster's KillWait). A borrowed allocation is left alone.
     */
    void close(int exitCode) {
        if (borrowed) {
            return;
        }
        if (batch && endBatch(exitCode)) {
            return;
        }
        if (salloc != null && salloc.isAlive()) {
            try (OutputStream in = salloc.getOutputStream()) {
                in.write((exitCode + "\n").getBytes(StandardCharsets.US_ASCII));
            } catch (IOException e) {
                // salloc is ending already
            }
            try {
                if (salloc.waitFor(RELEASE_S, TimeUnit.SECONDS)) {
                    if (guard != null) {
                        guard.destroy(); // the job ended as it should: nothing to cancel
                    }
                    return;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            LOG.warn("salloc of job {} did not end within {} s: cancelling the job", jobId, RELEASE_S);
        }
        cancel();
    }

    /**
     * Ends a batch-held allocation as the run ended: its script gets USR1 (exit 0), INT (130) or
     * USR2 (any other failure) and exits so, and Slurm records COMPLETED or FAILED. True once the
     * job left RUNNING within {@value #RELEASE_S} s.
     */
    private boolean endBatch(int exitCode) {
        String signal = exitCode == 0 ? "USR1" : exitCode == 130 ? "INT" : "USR2";
        if (SlurmCommands.ask(List.of("scancel", "--batch", "--signal=" + signal, jobId), env).isEmpty()) {
            return false;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(RELEASE_S);
        while (System.nanoTime() < deadline) {
            String state = SlurmCommands.job(jobId, env).flatMap(r -> field(r, "JobState")).orElse("");
            if (!state.equals("RUNNING")) {
                if (guard != null) {
                    guard.destroy(); // the job ended as it should: nothing to cancel
                }
                return true;
            }
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        LOG.warn("batch job {} did not end within {} s of its signal: cancelling it", jobId, RELEASE_S);
        return false;
    }

    /** Cancels the job (every step of it ends), and lets the guard go. */
    private void cancel() {
        try {
            ProcessBuilder pb = new ProcessBuilder("scancel", "--quiet", jobId).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD);
            pb.environment().clear();
            pb.environment().putAll(env);
            Process p = pb.start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                LOG.warn("scancel {} did not answer within 30 s", jobId);
            }
        } catch (IOException e) {
            LOG.warn("cannot run scancel {}: {}", jobId, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (guard != null) {
            try (OutputStream out = guard.getOutputStream()) {
                out.write('\n');
            } catch (IOException e) {
                // the guard is gone: its job too
            }
        }
    }
}
