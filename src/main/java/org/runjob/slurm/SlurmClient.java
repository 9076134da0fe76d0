package org.runjob.slurm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.runjob.node.NodeException;

/**
 * Slurm's client commands run from this process ({@code scontrol}, {@code scancel}, {@code squeue},
 * {@code sinfo}, ...): with the given environment, nothing on their stdin, and 60 s to end; as a
 * question whose answer may be missing ({@link #ask}), a command that should just work
 * ({@link #failure}), a job's record ({@link #job}) or a host list expanded ({@link #hostnames}).
 */
final class SlurmClient {

    private SlurmClient() {
    }

    /** A Slurm client command's exit status (-1 when it did not end in time) and its output, stdout and stderr together. */
    record Ran(int code, String out) {
        boolean ok() {
            return code == 0;
        }
    }

    /**
     * Runs a Slurm client command with {@code env} and nothing on its stdin; one that hangs is
     * ended after 60 s (which ends the read of its output).
     *
     * @throws IOException when it cannot be started (no Slurm client here)
     */
    static Ran run(List<String> argv, Map<String, String> env) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        CompletableFuture.delayedExecutor(60, TimeUnit.SECONDS).execute(p::destroyForcibly);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return new Ran(-1, out);
        }
        return new Ran(p.exitValue(), out);
    }

    /** The same, for a question whose answer may be missing: the output, or empty when the command could not run. */
    static Optional<String> ask(List<String> argv, Map<String, String> env) {
        try {
            return Optional.of(run(argv, env).out());
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** Runs a Slurm client command that should just work: empty when it exited 0, else what it said (or why it could not run). */
    static Optional<String> failure(List<String> argv, Map<String, String> env) {
        try {
            Ran ran = run(argv, env);
            return ran.ok() ? Optional.empty() : Optional.of(ran.out().trim());
        } catch (IOException e) {
            return Optional.of("cannot run " + argv.get(0) + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of(argv.get(0) + " was interrupted");
        }
    }

    /** The job's record on one line ({@code scontrol -o show job ID}); empty when scontrol cannot run. */
    static Optional<String> job(String jobId, Map<String, String> env) {
        return ask(List.of("scontrol", "-o", "show", "job", jobId), env);
    }

    /**
     * The node names a Slurm host list stands for ({@code gpu[01-03],cpu7}), in its order, from
     * {@code scontrol show hostnames} (which expands the list itself, without asking slurmctld).
     *
     * @throws NodeException when scontrol cannot run or refuses the list
     */
    static List<String> hostnames(String hostList, Map<String, String> env) throws NodeException {
        Ran ran;
        try {
            ran = run(List.of("scontrol", "show", "hostnames", hostList), env);
        } catch (IOException e) {
            throw new NodeException("cannot run scontrol (is Slurm's client installed here?): " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NodeException("interrupted while asking scontrol about " + hostList, e);
        }
        List<String> names = ran.out().lines().map(String::trim).filter(l -> !l.isEmpty()).toList();
        if (!ran.ok() || names.isEmpty()) {
            throw new NodeException("scontrol show hostnames " + hostList + " failed: " + ran.out().trim());
        }
        return names;
    }
}
