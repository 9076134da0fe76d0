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

    private Allocation(String jobId, Map<String, String> env, Process guard, Process salloc) {
        this(jobId, env, guard, salloc, false);
    }

    private Allocation(String jobId, Map<String, String> env, Process guard, Process salloc, boolean borrowed) {
        this.jobId = jobId;
        this.env = env;
        this.guard = guard;
        this.salloc = salloc;
        this.borrowed = borrowed;
    }

    /**
     * The allocation runjob runs inside ({@code SLURM_JOB_ID} of the user's salloc or sbatch): its
     * steps go there, and it is never cancelled; its owner ends it, and its record says how.
     */
    static Allocation existing(String jobId, Map<String, String> env) {
        return new Allocation(jobId, env, null, null, true);
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
        // salloc --no-shell (a hostfile layout) ends at the grant; salloc ... HOLD lasts as long as the allocation
        boolean held = !salloc.contains(SlurmCommands.NO_SHELL);
        if (!held) {
            try {
                p.getOutputStream().close();
            } catch (IOException e) {
                // salloc reads nothing
            }
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
            while (!(granted && held) && (line = err.readLine()) != null) {
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
            if (!(granted && held)) {
                p.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (IOException e) {
            errors.add(e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            errors.add("interrupted");
        }
        if (job.isPresent() && granted && held && p.isAlive()) {
            waiting.granted = true;
            LOG.info("slurm job {} allocated", job.get());
            drain(err);
            return new Allocation(job.get(), env, guard, p);
        }
        if (job.isPresent() && granted && !held && !p.isAlive() && p.exitValue() == 0) {
            LOG.info("slurm job {} allocated (no shell: it is cancelled at the end)", job.get());
            return new Allocation(job.get(), env, guard, null);
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
