package org.runjob.agent;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A node's setup commands, run once per content key ({@code KEY}, the coordinator's hash of the
 * commands, the environment and the shipped files they name).
 *
 * <ol>
 *   <li>The key's lock ({@code WORKDIR/.runjob/setup/KEY.lock}) is taken, waiting for another
 *       holder: two runs at once, or nodes that share the workdir, never run one setup twice.</li>
 *   <li>Its marker {@code KEY.done} there: setup ran with this content already; nothing runs.</li>
 *   <li>Else each command runs in turn as {@code bash -c COMMAND} (in a session of its own, in the
 *       run's directory, with the activated environment), each line it prints going to
 *       {@code output} (a line longer than {@value #MAX_LINE} bytes cut); the first that fails, or
 *       running past the deadline (the whole session killed then), ends setup with the last lines
 *       it printed. All succeeded: the marker is written, and the lock let go.</li>
 * </ol>
 */
final class Setup {

    /** How setup went: {@code ran}, {@code up to date}, {@code due}; or an error with the last lines. */
    record Result(String state, double seconds, String error) {
    }

    private static final int TAIL = 10;
    /** The longest line of a setup's output kept whole (a longer one is cut, with the count of bytes dropped). */
    static final int MAX_LINE = 16 * 1024;

    private Setup() {
    }

    /**
     * @param check   only say whether setup is due: run nothing
     * @param force   run even when the marker says it ran
     * @param command a command's argv (a container's, or {@code bash -c COMMAND})
     */
    static Result run(Path metaDir, String key, List<String> commands, boolean check, boolean force, long timeoutMs, Path dir,
                      Map<String, String> env, Function<String, List<String>> command, Consumer<String> output) {
        Path setupDir = metaDir.resolve("setup");
        try {
            if (!Files.isDirectory(setupDir, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectories(setupDir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
            Path done = setupDir.resolve(key + ".done");
            if (check) {
                return new Result(Files.exists(done, LinkOption.NOFOLLOW_LINKS) && !force ? "up to date" : "due", 0, null);
            }
            try (FileChannel lock = FileChannel.open(setupDir.resolve(key + ".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS); FileLock held = lock.lock()) {
                if (Files.exists(done, LinkOption.NOFOLLOW_LINKS) && !force) {
                    return new Result("up to date", 0, null);
                }
                long start = System.nanoTime();
                long deadline = start + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
                for (String c : commands) {
                    String error = one(command.apply(c), c, dir, env, deadline, timeoutMs, output);
                    if (error != null) {
                        return new Result("failed", seconds(start), error);
                    }
                }
                Files.writeString(done, String.join("\n", commands) + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                        StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
                return new Result("ran", seconds(start), null);
            }
        } catch (IOException e) {
            return new Result("failed", 0, "setup cannot run: " + WorkdirGuard.reason(e));
        }
    }

    private static double seconds(long start) {
        return (System.nanoTime() - start) / 1e9;
    }

    /** Runs one command to its end; null when it succeeded, else why, with its last lines. */
    private static String one(List<String> argv, String text, Path dir, Map<String, String> env, long deadline, long timeoutMs,
                              Consumer<String> output) throws IOException {
        List<String> cmd = new ArrayList<>();
        if (Files.isExecutable(Path.of("/usr/bin/setsid"))) {
            cmd.add("/usr/bin/setsid");
        }
        cmd.addAll(argv);
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = pb.start();
        Deque<String> tail = new ArrayDeque<>();
        Thread reader = new Thread(() -> {
            try (InputStream in = p.getInputStream()) {
                BoundedLines.read(in, MAX_LINE, line -> {
                    synchronized (tail) {
                        tail.addLast(line);
                        if (tail.size() > TAIL) {
                            tail.removeFirst();
                        }
                    }
                    output.accept(line);
                });
            } catch (IOException e) {
                // the pipe closed
            }
        }, "setup-output");
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
            kill(p);
        }
        try {
            reader.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        String last;
        synchronized (tail) {
            last = tail.isEmpty() ? "" : ":\n" + String.join("\n", tail);
        }
        if (!ended) {
            return "setup did not end within " + timeoutMs / 1000 + " s (setup_timeout_s): '" + text + "' was killed" + last;
        }
        return p.exitValue() == 0 ? null : "setup command '" + text + "' failed with exit code " + p.exitValue() + last;
    }

    /** The command's whole session: SIGKILL to every process in it. */
    private static void kill(Process p) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        try {
            p.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
