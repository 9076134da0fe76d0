package org.runjob.agent;

import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Every thread's stack of a rank's Python processes, on request, with no change to the training
 * script and the run undisturbed.
 *
 * <p>Every worker gets a private directory first on its {@code PYTHONPATH} holding runjob's
 * {@code sitecustomize.py}: each Python process registers {@code faulthandler} on a real-time
 * signal, writing to {@code RUNJOB_STACKS_DIR/PID} (first line: {@code runjob-stacks SIGNAL
 * MAIN-THREAD}), then runs the next {@code sitecustomize} on its path as it would have run. A
 * capture signals only processes whose file says so and whose handler is still installed
 * ({@code SigCgt}), so a script that took the signal over, or a program that is no Python, is
 * never hit; faulthandler writes from the signal handler, so a rank blocked in C code (a
 * collective that never completes) answers too. A JVM worker gives its thread dump through its
 * attach listener ({@link JavaAttach}).
 *
 * <p>The directory is the watchdog's private one (mode 700, removed by the watchdog) when there
 * is one, else a temporary directory this hook removes on {@link #close}.
 */
final class StackHook implements AutoCloseable {

    static final String VARIABLE = "RUNJOB_STACKS_DIR";
    private static final String HEADER = "runjob-stacks ";
    private static final long SETTLE_MS = 100;
    private static final long CAPTURE_MS = 3000;
    private static final int SIGQUIT = 3;
    static final long PY_SPY_MS = 10_000;

    private final Path dir;
    private final Path dumps;
    private final boolean own;

    private StackHook(Path dir, boolean own) throws IOException {
        this.dir = dir;
        this.own = own;
        this.dumps = dir.resolve("stacks");
        Files.createDirectory(dumps, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        try (InputStream in = StackHook.class.getResourceAsStream("sitecustomize.py")) {
            if (in == null) {
                throw new IOException("sitecustomize.py is missing from the agent's jar");
            }
            Files.write(dumps.resolveSibling("sitecustomize.py"), in.readAllBytes());
        }
    }

    /** A hook in the watchdog's directory ({@code state}), else in a fresh temporary one; empty when neither can be made. */
    static Optional<StackHook> create(Optional<Path> state) {
        try {
            if (state.isPresent()) {
                return Optional.of(new StackHook(state.get(), false));
            }
            return Optional.of(new StackHook(Files.createTempDirectory("runjob-stacks-"), true));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The hook's directory: what a container mounts for its workers' stacks. */
    Path directory() {
        return dir;
    }

    /** Puts the hook first on the worker's {@code PYTHONPATH} and names the dump directory. */
    void addTo(Map<String, String> env) {
        String path = env.get("PYTHONPATH");
        env.put("PYTHONPATH", dir + (path == null || path.isEmpty() ? "" : ":" + path));
        env.put(VARIABLE, dumps.toString());
    }

    /**
     * Signals every hooked Python process among {@code pids} at once and collects their dumps,
     * {@value #CAPTURE_MS} ms at most: per process {@code process PID (COMM), main thread 0x...},
     * then faulthandler's text; then each JVM's thread dump ({@link JavaAttach}) after
     * {@code process PID (COMM), thread dump}. A rank with neither gets one line saying why.
     */
    String capture(Collection<Long> pids) {
        return capture(pids, Optional.empty());
    }

    /** {@link #capture(Collection)}, and with {@code pySpy} each Python process's {@code py-spy dump --native} after its own dump. */
    String capture(Collection<Long> pids, Optional<Path> pySpy) {
        Map<Long, Target> targets = new LinkedHashMap<>();
        List<Long> jvms = new ArrayList<>();
        for (long pid : pids) {
            target(pid).ifPresentOrElse(t -> targets.put(pid, t), () -> {
                if (isJvm(pid)) {
                    jvms.add(pid);
                }
            });
        }
        if (targets.isEmpty() && jvms.isEmpty()) {
            return "no stack: no process of this rank is a Python with runjob's stack hook or a JVM"
                    + " (a Python started with -I or -E ignores PYTHONPATH; a JVM started with -Xrs takes no SIGQUIT)\n";
        }
        targets.values().forEach(Target::send);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CAPTURE_MS);
        StringBuilder out = new StringBuilder();
        for (Target t : targets.values()) {
            out.append("process ").append(t.pid).append(" (").append(ProcInfo.comm(t.pid)).append("), main thread ").append(t.mainThread).append('\n');
            String dump = t.await(deadline);
            out.append(dump.isEmpty() ? "(no answer within " + CAPTURE_MS / 1000 + " s)\n" : dump);
            if (!dump.endsWith("\n\n")) {
                out.append('\n');
            }
            pySpy.ifPresent(spy -> out.append("py-spy dump --native (native frames too):\n").append(pySpy(spy, t.pid)).append('\n'));
        }
        for (long pid : jvms) {
            long left = Math.max(100, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
            out.append("process ").append(pid).append(" (").append(ProcInfo.comm(pid)).append("), thread dump\n")
                    .append(JavaAttach.threadDump(pid, left).orElse("(no answer within " + CAPTURE_MS / 1000 + " s)\n")).append('\n');
        }
        return out.toString();
    }

    /** What {@code py-spy dump --native --pid PID} printed (stdout, then stderr), {@value #PY_SPY_MS} ms at most. */
    private static String pySpy(Path spy, long pid) {
        return Commands.run(new ProcessBuilder(spy.toString(), "dump", "--native", "--pid", Long.toString(pid)).redirectErrorStream(true),
                        PY_SPY_MS, 1 << 20)
                .map(r -> r.out() + (r.code() == 0 ? "" : "(py-spy exited " + r.code() + ")\n"))
                .orElse("(py-spy did not start)\n");
    }

    /** A HotSpot JVM ({@code java} as its program) that catches SIGQUIT, so its attach listener can be started. */
    private static boolean isJvm(long pid) {
        try {
            Path exe = Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "exe"));
            return exe.getFileName() != null && exe.getFileName().toString().equals("java") && ProcInfo.catches(pid, SIGQUIT);
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private Optional<Target> target(long pid) {
        Path file = dumps.resolve(Long.toString(pid));
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return Optional.empty();
        }
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            String header = f.readLine();
            if (header == null || !header.startsWith(HEADER)) {
                return Optional.empty();
            }
            String[] parts = header.substring(HEADER.length()).split(" ");
            int signal = Integer.parseInt(parts[0]);
            if (signal < 32 || signal > 64 || !ProcInfo.catches(pid, signal)) {
                return Optional.empty();
            }
            return Optional.of(new Target(pid, signal, parts.length > 1 ? parts[1] : "?", file, f.length()));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** One hooked process: its dump file and the length it had before the signal. */
    private record Target(long pid, int signal, String mainThread, Path file, long before) {

        /** Signals the process; when that fails its dump stays empty and says so. */
        void send() {
            Commands.kill(pid, Integer.toString(signal));
        }

        /** What faulthandler appended, once the file has stopped growing for {@value #SETTLE_MS} ms, or at the deadline. */
        String await(long deadline) {
            long size = before;
            long stableSince = System.nanoTime();
            while (System.nanoTime() < deadline) {
                long now = length();
                if (now != size) {
                    size = now;
                    stableSince = System.nanoTime();
                } else if (size > before && System.nanoTime() - stableSince >= TimeUnit.MILLISECONDS.toNanos(SETTLE_MS)) {
                    break;
                }
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
                long end = Math.min(f.length(), before + (1 << 20));
                byte[] bytes = new byte[(int) Math.max(0, end - before)];
                f.seek(before);
                f.readFully(bytes);
                return new String(bytes, StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "";
            }
        }

        private long length() {
            try {
                return Files.size(file);
            } catch (IOException e) {
                return before;
            }
        }
    }

    @Override
    public void close() {
        List<Path> all = new ArrayList<>();
        Path root = own ? dir : dumps;
        try (Stream<Path> walk = Files.walk(root)) {
            walk.forEach(all::add);
        } catch (IOException e) {
            return;
        }
        if (!own) {
            all.add(dir.resolve("sitecustomize.py"));
        }
        all.sort(Comparator.reverseOrder());
        for (Path p : all) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException e) {
                // a worker's straggler writes there still: the watchdog removes the directory
            }
        }
    }
}
