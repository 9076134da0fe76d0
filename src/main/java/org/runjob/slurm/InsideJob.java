package org.runjob.slurm;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.node.NodeException;
import org.runjob.node.SchedulerStop;

/**
 * The Slurm job runjob runs inside (a salloc shell, an sbatch script, runjob's own batch job):
 * why Slurm ends it ({@link #stoppedBy}), and what runjob asks of it: nodes to keep off at its next
 * start, its cancel after a stop, its requeue at the time limit.
 */
final class InsideJob {

    /** The cluster's log name: what is said of the job is said as the cluster's. */
    private static final Logger LOG = LogManager.getLogger(SlurmCluster.class);

    private final String jobId;
    private final Optional<String> nodes;
    private final Map<String, String> env;
    private final Map<String, String> allEnv;

    /**
     * @param nodes  the job's node list as its environment gives it
     * @param env    the environment Slurm's commands run with
     * @param allEnv the whole environment runjob was given (SLURM_RESTART_COUNT)
     */
    InsideJob(String jobId, Optional<String> nodes, Map<String, String> env, Map<String, String> allEnv) {
        this.jobId = jobId;
        this.nodes = nodes;
        this.env = env;
        this.allEnv = allEnv;
    }

    /** How often Slurm has restarted the job; 0 when it never did. */
    private int restarts() {
        return SlurmEnv.restartCount(allEnv).map(Integer::parseInt).orElse(0);
    }

    /**
     * Inside the user's or runjob's own batch job: what its record says while this step is being
     * ended ({@link SlurmEvents#stop}); a record that reads only COMPLETING is asked again for up to
     * 2 s, until it shows its end state, and is then read for what it is ({@link SlurmEvents#stillEnding}).
     */
    Optional<SchedulerStop> stoppedBy() {
        if (nodes.isEmpty()) {
            return Optional.empty();
        }
        int own = restarts();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        try {
            List<String> held = SlurmClient.hostnames(nodes.get(), env);
            while (true) {
                String out = SlurmClient.job(jobId, env).orElse("");
                Optional<String> list = SlurmEvents.nodeList(out);
                List<String> now = list.isPresent() ? SlurmClient.hostnames(list.get(), env) : List.of();
                Optional<SchedulerStop> stop = SlurmEvents.stop(jobId, out, own, held, now);
                if (stop.isPresent()) {
                    return stop;
                }
                if (System.nanoTime() > deadline) {
                    return SlurmEvents.stillEnding(jobId, out);
                }
                Thread.sleep(200);
            }
        } catch (NodeException e) {
            LOG.warn("cannot tell why Slurm ends job {}: {}", jobId, e.getMessage());
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /**
     * {@code scontrol update JobId=J ExcNodeList=...}: the Slurm nodes among {@code machines} added to
     * those the job already keeps off. Slurm takes it while the requeued job is still being ended
     * (COMPLETING) or waits in the queue, and places its next start elsewhere.
     */
    Optional<String> keepOff(Set<String> machines) {
        List<String> off = SlurmAddress.nodesOf(machines);
        if (off.isEmpty()) {
            return Optional.empty();
        }
        List<String> all = new ArrayList<>();
        SlurmClient.job(jobId, env).flatMap(SlurmEvents::excluded).ifPresent(all::add);
        all.addAll(off);
        return SlurmClient.failure(List.of("scontrol", "update", "JobId=" + jobId, "ExcNodeList=" + String.join(",", all)), env)
                .map(p -> "scontrol update ExcNodeList: " + p);
    }

    /**
     * {@code scancel J} of the batch job runjob runs in, while Slurm still reads it RUNNING: a
     * stopped run's job is then recorded {@code CANCELLED}, as a stop is, not {@code FAILED} with
     * runjob's exit code 130.
     */
    Optional<String> cancelAfterStop() {
        // a job Slurm itself ends or requeues (a cancel, preemption, requeue, time limit) reads otherwise than RUNNING: left to Slurm
        if (!SlurmClient.ask(List.of("scontrol", "show", "job", jobId), env).map(SlurmEvents::running).orElse(false)) {
            return Optional.empty();
        }
        Optional<String> refused = SlurmClient.failure(List.of("scancel", jobId), env);
        return Optional.of(refused.map(r -> "cannot cancel Slurm job " + jobId + ": " + r)
                .orElse("Slurm job " + jobId + " is cancelled: the run was stopped"));
    }

    /**
     * {@code scontrol requeue J} of the batch job runjob runs in, when {@code slurm.requeue_on_time_limit}
     * asks for it and the job has been requeued fewer than {@code slurm.max_time_limit_requeues}
     * times ({@code SLURM_RESTART_COUNT}); what was done, for the console.
     */
    Optional<String> requeueAfterTimeLimit(SlurmSettings slurm) {
        if (!slurm.requeueOnTimeLimit()) {
            return Optional.empty();
        }
        int done = restarts();
        if (done >= slurm.maxTimeLimitRequeues()) {
            return Optional.of("Slurm job " + jobId + " is not requeued again: it was requeued " + done + " time" + (done == 1 ? "" : "s")
                    + " already (slurm.max_time_limit_requeues " + slurm.maxTimeLimitRequeues() + "); give it a longer time limit, or"
                    + " resume it with runjob submit --resume");
        }
        Optional<String> refused = SlurmClient.failure(List.of("scontrol", "requeue", jobId), env);
        return Optional.of(refused.map(r -> "cannot requeue Slurm job " + jobId + ": " + r).orElse("Slurm job " + jobId
                + " is requeued (slurm.requeue_on_time_limit), continuation " + (done + 1) + " of at most " + slurm.maxTimeLimitRequeues()
                + ": the run goes on as its next attempt when Slurm starts it again"));
    }
}
