package org.runjob.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.runjob.protocol.Answer;
import org.runjob.protocol.HealthRequest;

/**
 * Answers HEALTH ({@link HealthRequest}): first the GPUs the node's workers use, through
 * {@code nvidia-smi --query-gpu=index,ecc.errors.uncorrected.volatile.total} where nvidia-smi is on
 * the PATH (a GPU it does not list is missing; a count above 0 is unhealthy; {@code [N/A]}, a GPU
 * without ECC, is fine); then each command as {@code bash -c COMMAND} in the run's directory, in a
 * session of its own, with stdin from /dev/null. The first command that exits non-zero, or is still
 * running at the deadline (its whole session killed then), fails the check with its last line.
 */
final class HealthCheck {

    private static final int MAX_OUTPUT = 64 * 1024;
    static final String QUERY = "--query-gpu=index,ecc.errors.uncorrected.volatile.total";

    private HealthCheck() {
    }

    static Answer answer(HealthRequest request, Map<String, String> agentEnv, Path dir) {
        Map<String, String> all = new HashMap<>(agentEnv);
        all.putAll(request.env());
        Map<String, String> env = Commands.withoutRc(all);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(request.timeoutMillis());
        if (!request.gpus().isEmpty()) {
            Optional<String> gpuProblem = gpus(request.gpus(), env, dir, deadline);
            if (gpuProblem.isPresent()) {
                return Answer.failed(gpuProblem.get());
            }
        }
        for (String c : request.commands()) {
            Ran ran = run(Commands.bash(c), env, dir, deadline);
            if (ran.timedOut()) {
                return Answer.failed("health check '" + c + "' did not end within " + request.timeoutMillis() / 1000 + " s");
            }
            if (ran.code() != 0) {
                return Answer.failed("health check '" + c + "' exited " + ran.code() + lastLine(ran.out()));
            }
        }
        return Answer.done();
    }

    /** Why the GPUs {@code used} are not healthy, as nvidia-smi tells; empty when they are, or no nvidia-smi is there. */
    static Optional<String> gpus(List<Integer> used, Map<String, String> env, Path dir, long deadline) {
        if (Programs.find("nvidia-smi", env.getOrDefault("PATH", ""), dir).isEmpty()) {
            return Optional.empty();
        }
        Ran ran = run(List.of("nvidia-smi", QUERY, "--format=csv,noheader,nounits"), env, dir, deadline);
        if (ran.timedOut() || ran.code() != 0) {
            return Optional.of("nvidia-smi " + (ran.timedOut() ? "did not answer in time" : "exited " + ran.code()) + lastLine(ran.out()));
        }
        return eccProblem(used, ran.out());
    }

    /** The first GPU of {@code used} that nvidia-smi's CSV answer {@code csv} lists with uncorrectable ECC errors, or does not list. */
    static Optional<String> eccProblem(List<Integer> used, String csv) {
        Map<Integer, String> ecc = new HashMap<>();
        for (String line : csv.split("\n")) {
            String[] f = line.split(",");
            if (f.length < 2) {
                continue;
            }
            try {
                ecc.put(Integer.parseInt(f[0].trim()), f[1].trim());
            } catch (NumberFormatException e) {
                // a line that is no GPU's
            }
        }
        for (int gpu : used) {
            String errors = ecc.get(gpu);
            if (errors == null) {
                return Optional.of("GPU " + gpu + " is missing: nvidia-smi does not list it");
            }
            try {
                long n = Long.parseLong(errors);
                if (n > 0) {
                    return Optional.of("GPU " + gpu + " has " + n + " uncorrectable ECC error" + (n == 1 ? "" : "s") + " (nvidia-smi)");
                }
            } catch (NumberFormatException e) {
                // [N/A] and the like: no ECC to tell of
            }
        }
        return Optional.empty();
    }

    private record Ran(int code, String out, boolean timedOut) {
    }

    private static Ran run(List<String> argv, Map<String, String> env, Path dir, long deadline) {
        List<String> cmd = new ArrayList<>();
        if (Path.of("/usr/bin/setsid").toFile().canExecute()) {
            cmd.add("/usr/bin/setsid");
        }
        cmd.addAll(argv);
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            return new Ran(127, "cannot start " + argv.get(0) + ": " + e.getMessage(), false);
        }
        StringBuilder out = new StringBuilder();
        Thread reader = new Thread(() -> {
            try {
                String read = new String(p.getInputStream().readNBytes(MAX_OUTPUT), StandardCharsets.UTF_8);
                synchronized (out) {
                    out.append(read);
                }
            } catch (IOException e) {
                // the pipe closed
            }
        }, "health-output");
        reader.setDaemon(true);
        reader.start();
        boolean ended;
        try {
            ended = p.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ended = false;
        }
        if (!ended) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        try {
            reader.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (out) {
            return new Ran(ended ? p.exitValue() : -1, out.toString(), !ended);
        }
    }

    private static String lastLine(String out) {
        List<String> lines = out.lines().filter(l -> !l.isBlank()).toList();
        return lines.isEmpty() ? "" : ": " + lines.get(lines.size() - 1).strip();
    }
}
