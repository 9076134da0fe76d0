package org.runjob.testbackend;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.runjob.node.BatchQueue;
import org.runjob.spec.JobSpec;

/**
 * The batch queue of {@code backend: procs}, in the test sources only: a queued run's batch script
 * starts at once as a process of its own session on this machine (its coordinator, exec'd), and
 * the job id is its pid. Where a job stands is whether that process lives; a cancel is SIGTERM to
 * it (SIGKILL {@code now}): the coordinator's Ctrl-C path. It proves that submit, a run's records
 * and {@code stop} know a queue only by {@link BatchQueue}.
 */
final class ProcsQueue implements BatchQueue {

    /** The queue's own output file in the run folder: the batch step's stdout and stderr. */
    static final String OUTPUT = "procs-queue.out";

    @Override
    public List<String> submit(JobSpec spec, Path folder, Path script, List<String> coordinator, Set<String> avoid, Map<String, String> env) {
        List<String> argv = new ArrayList<>(List.of("sh", "-c", "out=$1; shift; setsid sh \"$@\" </dev/null >>\"$out\" 2>&1 & echo \"$!\"", "sh",
                folder.resolve(OUTPUT).toString(), script.toString()));
        argv.addAll(coordinator);
        return argv;
    }

    @Override
    public Optional<String> jobId(String output) {
        String id = output.lines().reduce((a, b) -> b).orElse("").trim();
        return id.matches("\\d+") ? Optional.of(id) : Optional.empty();
    }

    @Override
    public Optional<Path> output(Path folder, String jobId) {
        return Optional.of(folder.resolve(OUTPUT));
    }

    @Override
    public Optional<String> state(String jobId, Map<String, String> env) {
        return live(jobId) ? Optional.of("running") : Optional.empty();
    }

    @Override
    public Optional<String> cancel(String jobId, boolean now, Map<String, String> env) {
        Optional<ProcessHandle> p = ProcessHandle.of(Long.parseLong(jobId)).filter(h -> live(jobId));
        if (p.isEmpty()) {
            return Optional.of("no process " + jobId);
        }
        try {
            Process kill = new ProcessBuilder("kill", now ? "-KILL" : "-TERM", jobId).start();
            return kill.waitFor() == 0 ? Optional.empty() : Optional.of("kill " + jobId + " failed");
        } catch (IOException e) {
            return Optional.of(e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted");
        }
    }

    /** The job's process lives, and is a runjob (not a pid reused since). */
    private static boolean live(String jobId) {
        try {
            Path cmdline = Path.of("/proc", jobId, "cmdline");
            return Files.exists(cmdline) && Files.readString(cmdline).contains("org.runjob")
                    && !Files.readString(Path.of("/proc", jobId, "stat")).replaceFirst("^.*\\) ", "").startsWith("Z");
        } catch (IOException e) {
            return false;
        }
    }
}
