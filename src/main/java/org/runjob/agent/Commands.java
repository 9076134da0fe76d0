package org.runjob.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Short helper programs the agent runs for its answers (a Python's self-description, py-spy,
 * {@code kill} with a signal Java cannot send): each with a deadline, after which it is killed,
 * and its output read up to a bound.
 */
final class Commands {

    /** How a command ended: its exit status (that of a kill when it ran past the deadline) and what it printed. */
    record Ran(int code, String out) {
    }

    private Commands() {
    }

    /**
     * {@code bash} running {@code command} with no rc or profile file: a node's setup and health
     * check run in exactly the environment the workers get (an rc file's {@code pyenv init} or
     * conda hook, which bash reads for a command run under sshd, would put its Python first).
     */
    static List<String> bash(String command) {
        return List.of("/bin/bash", "--noprofile", "--norc", "-c", command);
    }

    /** {@code env} without the variables that make a non-interactive shell read a file first ({@link #bash}'s environment). */
    static Map<String, String> withoutRc(Map<String, String> env) {
        Map<String, String> out = new LinkedHashMap<>(env);
        out.remove("BASH_ENV");
        out.remove("ENV");
        return out;
    }

    /** Runs {@code pb} with empty stdin for {@code ms} at most; empty when it could not start. */
    static Optional<Ran> run(ProcessBuilder pb, long ms, int maxBytes) {
        try {
            Process p = pb.start();
            CompletableFuture.delayedExecutor(ms, TimeUnit.MILLISECONDS).execute(p::destroyForcibly);
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readNBytes(maxBytes), StandardCharsets.UTF_8);
            return Optional.of(new Ran(p.waitFor(), out));
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** Sends {@code signal} (a name or a number) to {@code pid} through the {@code kill} command; false when it could not. */
    static boolean kill(long pid, String signal) {
        return run(new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true), 2000, 4096)
                .filter(r -> r.code() == 0).isPresent();
    }
}
