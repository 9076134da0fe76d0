package org.runjob.agent;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.apache.commons.exec.CommandLine;
import org.apache.commons.exec.launcher.CommandLauncher;
import org.apache.commons.exec.launcher.CommandLauncherFactory;
import org.runjob.protocol.ContainerStart;
import org.runjob.protocol.Exit;
import org.runjob.protocol.Frame;
import org.runjob.protocol.MetricsChunk;
import org.runjob.protocol.Started;
import org.runjob.protocol.WorkerStart;
import org.runjob.runtime.ContainerStore;
import org.runjob.runtime.DockerCli;
import org.runjob.runtime.WorkerStartArgs;

/**
 * One worker on this node, started by Commons Exec in a session (and process group) of its own via
 * {@code setsid}, so that signals from the terminal never reach it and its whole tree can be found.
 *
 * <p>Lifecycle: {@link #start} launches it and two drain threads that read its stdout and stderr as
 * they come (chunks of at most {@value #CHUNK} bytes, never waiting on the coordinator) into the
 * spool; a waiter thread reports its {@link Exit} once it has exited and its pipes are drained (or
 * {@value #DRAIN_WAIT_MS} ms later, when a grandchild still holds them open).
 */
final class WorkerProcess {

    static final int CHUNK = 64 * 1024;
    static final long DRAIN_WAIT_MS = 2000;
    private static final Path SETSID = Path.of("/usr/bin/setsid");
    private static final CommandLauncher LAUNCHER = CommandLauncherFactory.createVMLauncher();

    private final WorkerStart spec;
    private final Spool spool;
    private final List<String> unset;
    private final Optional<ContainerStart> container;
    /** The record of the worker's container, where its runtime keeps one. */
    private final Optional<ContainerStore> store;
    private volatile String token;
    private volatile Process process;
    private volatile ProcessTree tree;
    private volatile boolean stopRequested;
    private volatile long stopRequestedAt;
    private Path errorFile;

    /**
     * @param unset     variables of the agent's environment the worker does not get (its node's activation removed them)
     * @param container the container it runs in, when there is one
     */
    WorkerProcess(WorkerStart spec, Spool spool, List<String> unset, Optional<ContainerStart> container) {
        this.spec = spec;
        this.spool = spool;
        this.unset = List.copyOf(unset);
        this.container = container;
        this.store = container.flatMap(c -> c.workerRuntime().store());
    }

    WorkerProcess(WorkerStart spec, Spool spool) {
        this(spec, spool, List.of(), Optional.empty());
    }

    /** This agent's id on its node, in the label of every container it starts: its pid and start time. */
    static String agentId() {
        ProcessHandle self = ProcessHandle.current();
        return self.pid() + "-" + self.info().startInstant().map(i -> Long.toString(i.toEpochMilli())).orElse("0");
    }

    int rank() {
        return spec.rank();
    }

    /** The worker's pid, or -1 before it started or when it could not start. */
    long pid() {
        Process p = process;
        return p == null ? -1 : p.pid();
    }

    /** Starts the worker; a failure to start is reported as {@link Exit.NotStarted}, not thrown. */
    void start(Map<String, String> agentEnv, Optional<StackHook> hook, Runnable onEnd) {
        Map<String, String> env = new HashMap<>(agentEnv);
        unset.forEach(env::remove);
        env.putAll(spec.env());
        hook.ifPresent(h -> h.addTo(env));
        String token = ProcessHandle.current().pid() + "-" + spec.rank() + "-" + System.nanoTime();
        this.token = token;
        env.put(ProcessTree.TOKEN_VARIABLE, token);
        Path dir = Workdirs.resolve(spec.workdir(), agentEnv);
        errorFile = errorFile(dir, env);
        MetricsTail metrics = new MetricsTail(MetricsTail.fileFor(dir, env),
                (skipped, b) -> send(new Frame(Frame.Type.METRICS, spec.rank(), MetricsChunk.encode(System.currentTimeMillis(), skipped, b))));
        List<String> argv = container.isEmpty() ? spec.argv() : inContainer(container.get(), dir, hook, env, token);
        try {
            Files.createDirectories(dir);
            Optional<String> missing = Programs.missing(argv.get(0), env.get("PATH"), dir);
            if (missing.isPresent()) {
                report(new Exit.Report(new Exit.NotStarted(missing.get()), 0));
                onEnd.run();
                return;
            }
            CommandLine cmd;
            if (Files.isExecutable(SETSID)) {
                cmd = new CommandLine(SETSID.toString());
                for (String a : argv) {
                    cmd.addArgument(a, false);
                }
            } else {
                cmd = new CommandLine(argv.get(0));
                argv.stream().skip(1).forEach(a -> cmd.addArgument(a, false));
            }
            process = LAUNCHER.exec(cmd, env, dir.toFile());
        } catch (IOException | RuntimeException e) {
            report(new Exit.Report(new Exit.NotStarted("cannot start " + spec.argv().get(0) + ": " + e.getMessage()), 0));
            onEnd.run();
            return;
        }
        try {
            process.getOutputStream().close(); // workers read EOF on stdin
        } catch (IOException e) {
            // already closed
        }
        tree = new ProcessTree(process.pid(), token);
        send(new Frame(Frame.Type.STARTED, spec.rank(), new Started(process.pid(), token).encode()));
        Thread out = drain(process.getInputStream(), Frame.Type.STDOUT, "out");
        Thread err = drain(process.getErrorStream(), Frame.Type.STDERR, "err");
        ScheduledFuture<?> following = metrics.follow();
        Thread waiter = new Thread(() -> {
            int value = waitFor();
            long endedAt = System.currentTimeMillis();
            boolean stoppedFirst = stopRequested; // judged when the program ended, not once its pipes are drained
            joinQuietly(out, DRAIN_WAIT_MS);
            joinQuietly(err, DRAIN_WAIT_MS);
            following.cancel(false);
            metrics.finish(); // every metrics line arrives before the worker's exit
            metrics.remove();
            if (value != 0) {
                sendErrorFile();
            }
            Exit.Report exit = store.isPresent()
                    ? containerEnd(store.get(), value, endedAt, stoppedFirst) : new Exit.Report(Exit.fromExitValue(value, stoppedFirst), endedAt);
            removeContainer();
            report(exit);
            onEnd.run();
        }, "wait-" + spec.rank());
        waiter.setDaemon(true);
        waiter.start();
    }

    /**
     * The container's command line for the worker: the run's directory and the stack hook's
     * mounted, the worker's own variables and a Slurm step's passed by name, the container kept in
     * the step's cgroup, and what the runtime's client needs besides into {@code env}.
     */
    private List<String> inContainer(ContainerStart c, Path dir, Optional<StackHook> hook, Map<String, String> env, String token) {
        List<String> names = new ArrayList<>(spec.env().keySet());
        List<String> more = new ArrayList<>(List.of(ProcessTree.TOKEN_VARIABLE, ERROR_FILE_VARIABLE, MetricsTail.VARIABLE, "PYTHONPATH",
                StackHook.VARIABLE));
        env.keySet().stream().filter(n -> n.startsWith("SLURM")).sorted().forEach(more::add); // the step's, as srun gives a task
        for (String n : more) {
            if (env.containsKey(n) && !names.contains(n)) {
                names.add(n);
            }
        }
        env.putAll(c.workerRuntime().clientEnvironment(names, env));
        List<String> gpus = WorkerStartArgs.gpusOf(spec.env().getOrDefault(WorkerStartArgs.CUDA_VISIBLE_DEVICES, ""));
        return c.argv(new WorkerStartArgs(dir.toString(), hook.map(h -> List.of(h.directory().toString())).orElse(List.of()), names, gpus,
                spec.env().getOrDefault("RUNJOB_RUN_ID", "run"), spec.rank(), agentId(), token, spec.argv(), StepCgroup.of(env)));
    }

    /**
     * A containerised worker's end by its runtime's record: the program's own exit code and end
     * time, and "stopped" only when the stop came before that end (the client may outlive its
     * program while the runtime tears the container down). Without a record (the container never
     * ran, or is still running after its client was killed), the client's exit as it was seen.
     */
    private Exit.Report containerEnd(ContainerStore record, int clientValue, long clientEndedAt, boolean stoppedFirst) {
        Optional<ContainerStore.Ended> ended = Containers.ended(record, DockerCli.TOKEN_LABEL + "=" + token);
        if (ended.isEmpty()) {
            return new Exit.Report(Exit.fromExitValue(clientValue, stoppedFirst), clientEndedAt);
        }
        long stop = stopRequestedAt;
        boolean stopped = stop != 0 && stop <= ended.get().atMillis();
        return new Exit.Report(Exit.fromExitValue(ended.get().code(), stopped), ended.get().atMillis());
    }

    /** The worker's container, running or exited, once its client is gone: removed by its token's label. */
    void removeContainer() {
        String t = token;
        if (store.isPresent() && t != null) {
            Containers.remove(store.get(), DockerCli.TOKEN_LABEL + "=" + t);
        }
    }

    /** True while the worker's own process runs. */
    boolean running() {
        Process p = process;
        return p != null && p.isAlive();
    }

    /** The worker's process and every process of its tree, the worker first. */
    List<Long> processes() {
        ProcessTree t = tree;
        List<Long> pids = new ArrayList<>(List.of(pid()));
        if (t != null) {
            t.members().forEach(h -> {
                if (h.pid() != pids.get(0)) {
                    pids.add(h.pid());
                }
            });
        }
        return pids;
    }

    private int waitFor() {
        while (true) {
            try {
                return process.waitFor();
            } catch (InterruptedException e) {
                // keep waiting: the agent never abandons a worker
            }
        }
    }

    /**
     * Marks the worker as being stopped by the agent (its exit is then expected) and sends SIGTERM to its tree.
     *
     * @return the pids that were sent SIGTERM
     */
    Set<Long> terminate() {
        stopRequested();
        return tree == null ? Set.of() : tree.terminate();
    }

    void kill() {
        stopRequested();
        if (tree != null) {
            tree.kill();
        }
    }

    private void stopRequested() {
        if (stopRequestedAt == 0) {
            stopRequestedAt = System.currentTimeMillis();
        }
        stopRequested = true;
    }

    /** True when the worker has exited and nothing it started is left, in {@code table}. */
    boolean gone(ProcTable table) {
        return process == null || (!process.isAlive() && tree.isEmpty(table));
    }

    /** True when every one of {@code workers} is gone, judged on one reading of /proc. */
    static boolean allGone(Collection<WorkerProcess> workers) {
        ProcTable table = ProcTable.read();
        return workers.stream().allMatch(w -> w.gone(table));
    }

    /** The largest error file sent back. */
    static final int MAX_ERROR_FILE = 1 << 20;

    /**
     * TORCHELASTIC_ERROR_FILE, as torchrun sets it: where torch's {@code @record} writes a failing
     * worker's exception as JSON. The job's own value is kept; else a file of this run, attempt and
     * rank under the workdir's {@code .runjob/errors}. Any file left there is removed first.
     */
    private static Path errorFile(Path workdir, Map<String, String> env) {
        String name = env.get(ERROR_FILE_VARIABLE);
        Path file = name != null ? workdir.resolve(name)
                : workdir.resolve(".runjob/errors").resolve(env.getOrDefault("RUNJOB_RUN_ID", "run") + "-attempt-"
                        + env.getOrDefault("RUNJOB_ATTEMPT", "0") + "-rank-" + env.getOrDefault("RANK", "0") + ".json");
        env.put(ERROR_FILE_VARIABLE, file.toString());
        try {
            Files.createDirectories(file.getParent());
            Files.deleteIfExists(file);
        } catch (IOException e) {
            // the worker finds out when it writes there
        }
        return file;
    }

    static final String ERROR_FILE_VARIABLE = "TORCHELASTIC_ERROR_FILE";

    /** A failed worker's error file, when it wrote one: sent (before its exit) and removed. */
    private void sendErrorFile() {
        try {
            if (errorFile != null && Files.isRegularFile(errorFile, LinkOption.NOFOLLOW_LINKS)) {
                byte[] bytes;
                try (InputStream in = Files.newInputStream(errorFile)) {
                    bytes = in.readNBytes(MAX_ERROR_FILE);
                }
                if (bytes.length > 0) {
                    send(new Frame(Frame.Type.ERROR_FILE, spec.rank(), bytes));
                }
                Files.deleteIfExists(errorFile);
            }
        } catch (IOException e) {
            // unreadable: the report falls back to stderr
        }
    }

    private Thread drain(InputStream in, Frame.Type type, String name) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[CHUNK];
            try (in) {
                int n;
                while ((n = in.read(buf)) > 0) {
                    send(new Frame(type, spec.rank(), Arrays.copyOf(buf, n)));
                }
            } catch (IOException e) {
                // the pipe closed: nothing more to read
            }
        }, name + "-" + spec.rank());
        t.setDaemon(true);
        t.start();
        return t;
    }

    private void report(Exit.Report exit) {
        send(new Frame(Frame.Type.EXITED, spec.rank(), exit.encode()));
    }

    private void send(Frame frame) {
        try {
            spool.put(frame);
        } catch (IOException e) {
            // spool disk full or closed: the agent is going down; output is lost only then
        }
    }

    private static void joinQuietly(Thread t, long millis) {
        try {
            t.join(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }


    static boolean waitUntil(BooleanSupplier done, long timeoutMs) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return done.getAsBoolean();
            }
        }
        return true;
    }

}
