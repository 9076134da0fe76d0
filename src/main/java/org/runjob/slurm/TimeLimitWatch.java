package org.runjob.slurm;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Stops a run gracefully before its allocation's time limit when no signal will say so: a run in
 * an allocation runjob made with salloc, or in the user's own (a submitted run's batch step gets
 * Slurm's SIGUSR1 instead). A daemon thread reads the job's {@code EndTime} ({@code scontrol -o
 * show job}, in this machine's time zone, as scontrol prints it) and, {@code before} seconds ahead
 * of it, hands {@code ending} the reason. It reads the end again at least every minute, so a time
 * limit raised meanwhile moves the stop; a job without a limit is not watched.
 */
final class TimeLimitWatch {

    private static final Logger LOG = LogManager.getLogger(TimeLimitWatch.class);
    private static final Pattern END = Pattern.compile("\\bEndTime=(\\S+)");
    private static final Pattern LIMIT = Pattern.compile("\\bTimeLimit=(\\S+)");
    private static final long RECHECK_MS = 60_000;

    private TimeLimitWatch() {
    }

    /** When to stop, from {@code scontrol -o show job}: {@code before} seconds ahead of its end; empty without a limit. */
    static Optional<Instant> stopAt(String scontrol, int before, ZoneId zone) {
        Matcher limit = LIMIT.matcher(scontrol);
        Matcher end = END.matcher(scontrol);
        if (!end.find() || (limit.find() && limit.group(1).equals("UNLIMITED"))) {
            return Optional.empty();
        }
        try {
            return Optional.of(LocalDateTime.parse(end.group(1)).atZone(zone).toInstant().minusSeconds(before));
        } catch (DateTimeParseException e) {
            return Optional.empty(); // "Unknown": no end yet
        }
    }

    /** The reason a run stopped by the watch reads: the job, its end, and how long before it. */
    static String reason(String jobId, Instant end, int before) {
        return "time limit: Slurm job " + jobId + " ends at " + LocalDateTime.ofInstant(end, ZoneId.systemDefault()).withNano(0)
                + " (its time limit); runjob stops the run " + before + " s before (slurm.stop_before_limit_s)";
    }

    /** Starts watching job {@code jobId} until {@code done}. */
    static void start(String jobId, Map<String, String> env, int before, Consumer<String> ending, BooleanSupplier done) {
        Thread t = new Thread(() -> watch(jobId, env, before, ending, done), "slurm-time-limit");
        t.setDaemon(true);
        t.start();
    }

    private static void watch(String jobId, Map<String, String> env, int before, Consumer<String> ending, BooleanSupplier done) {
        try {
            while (!done.getAsBoolean()) {
                Optional<String> job = SlurmClient.job(jobId, env);
                Optional<Instant> stop = job.flatMap(j -> stopAt(j, before, ZoneId.systemDefault()));
                if (stop.isEmpty()) {
                    LOG.info("slurm job {}: no time limit to watch", jobId);
                    return;
                }
                long wait = Duration.between(Instant.now(), stop.get()).toMillis();
                if (wait <= 0) {
                    LOG.info("slurm job {}: its time limit is {} s away: stopping the run", jobId, before);
                    ending.accept(reason(jobId, stop.get().plusSeconds(before), before));
                    return;
                }
                Thread.sleep(Math.min(wait, RECHECK_MS));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
