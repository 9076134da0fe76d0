package org.runjob.agent;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

import org.runjob.protocol.Frame;
import org.runjob.protocol.Stacks;
import org.runjob.protocol.StartRequest;
import org.runjob.protocol.WorkerStart;
import org.runjob.runtime.ContainerStore;
import org.runjob.runtime.DockerCli;

/**
 * This node's workers of one run, from START to the last process they left:
 * <ol>
 *   <li>{@link #start}, once: every worker starts ({@link WorkerProcess}), and the watchdog's list
 *       of the job's processes ({@link Registry}) is kept current every {@value Registry#EVERY_MS} ms.</li>
 *   <li>{@link #stopAll}, once, on its own thread: SIGTERM to every worker tree and every process
 *       they left, SIGKILL to what is left after the grace period. {@link #killAll}: SIGKILL now.</li>
 *   <li>{@link #stacks}, any number of times while they run: every running worker's stacks.</li>
 *   <li>{@link #awaitEnd} returns when every worker reported its exit (or none will start);
 *       {@link #finish} then stops what they left behind and empties the registry.</li>
 * </ol>
 */
final class WorkerGroup {

    private final Spool spool;
    private final Registry registry;
    private final Map<String, String> env;
    private final Optional<Path> stateDir;
    /** The record of the containers this agent starts, once START named a runtime that keeps one. */
    private volatile Optional<ContainerStore> store = Optional.empty();
    private Optional<StackHook> hook = Optional.empty();
    private final List<WorkerProcess> workers = new ArrayList<>();
    private final CountDownLatch started = new CountDownLatch(1);
    private volatile CountDownLatch ended;
    private volatile long graceMillis = 10_000;
    private volatile boolean stopping;
    private boolean finished;

    /** @param stateDir the watchdog's private directory, where the {@link StackHook} goes when there is one */
    WorkerGroup(Spool spool, Registry registry, Map<String, String> env, Optional<Path> stateDir) {
        this.spool = spool;
        this.registry = registry;
        this.env = env;
        this.stateDir = stateDir;
    }

    /** Starts the request's workers; false (nothing done) when a START came before. */
    synchronized boolean start(StartRequest request) {
        if (started.getCount() == 0) {
            return false;
        }
        graceMillis = request.graceMillis();
        ended = new CountDownLatch(request.workers().size());
        for (WorkerStart spec : request.workers()) {
            workers.add(new WorkerProcess(spec, spool, request.unset(), request.container()));
        }
        store = request.container().flatMap(c -> c.workerRuntime().store());
        store.ifPresent(s -> registry.containers(Programs.find(s.program(), env.get("PATH"), Path.of("/")).map(Path::toString).orElse(s.program()),
                agentLabel()));
        registry.grace(graceMillis);
        hook = StackHook.create(stateDir);
        started.countDown();
        for (WorkerProcess w : workers) {
            w.start(env, hook, ended::countDown);
        }
        registry.sweep(workerPids());
        Thread keeper = new Thread(this::keepRegistry, "agent-registry");
        keeper.setDaemon(true);
        keeper.start();
        return true;
    }

    /** No START will come (the channel ended first): {@link #awaitEnd} returns at once. */
    synchronized void noStart() {
        if (started.getCount() > 0) {
            ended = new CountDownLatch(0);
            started.countDown();
        }
    }

    /** Waits until START came and every worker reported its exit, or {@link #noStart}. */
    void awaitEnd() {
        awaitQuietly(started);
        awaitQuietly(ended);
    }

    /** After {@link #awaitEnd}: stops what the workers left (a daemonised child, say) and empties the watchdog's list. */
    void finish() {
        List<WorkerProcess> all;
        synchronized (this) {
            all = List.copyOf(workers);
        }
        if (!allGone(all)) {
            stop(all);
        }
        synchronized (this) {
            finished = true;
        }
        registry.sweep(List.of());
        removeContainers();
        hook.ifPresent(StackHook::close);
    }

    /**
     * Sends one STACK frame per running worker, the capture's id first: the stacks of its Python
     * processes and JVMs ({@link StackHook}); on its own thread, so the agent's reading goes on.
     *
     * @param request with native frames: py-spy's too, where py-spy is on the PATH
     */
    void stacks(Stacks.Request request) {
        Optional<Path> pySpy = request.nativeFrames() ? Programs.find("py-spy", env.get("PATH"), Path.of("/")) : Optional.empty();
        List<WorkerProcess> snapshot;
        Optional<StackHook> h;
        synchronized (this) {
            snapshot = List.copyOf(workers);
            h = hook;
        }
        Thread t = new Thread(() -> {
            for (WorkerProcess w : snapshot) {
                if (!w.running()) {
                    continue;
                }
                String text = h.map(x -> x.capture(w.processes(), pySpy))
                        .orElse("no stack: the agent could not set up its stack hook (no writable temporary directory)\n");
                if (request.nativeFrames() && pySpy.isEmpty()) {
                    text += "(no native frames: py-spy is not on this node's PATH)\n";
                }
                try {
                    spool.put(new Frame(Frame.Type.STACK, w.rank(), new Stacks.Answer(request.id(), text).encode()));
                } catch (IOException e) {
                    return;
                }
            }
        }, "agent-stacks");
        t.setDaemon(true);
        t.start();
    }

    boolean stopping() {
        return stopping;
    }

    /** TERM every worker tree, then KILL what is left after the grace period; once only, on its own thread. */
    void stopAll() {
        List<WorkerProcess> snapshot;
        synchronized (this) {
            if (stopping) {
                return;
            }
            stopping = true;
            snapshot = List.copyOf(workers);
        }
        Thread t = new Thread(() -> stop(snapshot), "agent-stop");
        t.setDaemon(true);
        t.start();
    }

    void killAll() {
        List<WorkerProcess> snapshot;
        synchronized (this) {
            stopping = true;
            snapshot = List.copyOf(workers);
        }
        snapshot.forEach(WorkerProcess::kill);
        signalStrays(true, Set.of());
        removeContainers();
    }

    /** Every container this agent started, running or exited, is removed (by its agent label). */
    private void removeContainers() {
        Optional<ContainerStore> s = store;
        if (s != null && s.isPresent()) {
            Containers.remove(s.get(), agentLabel());
        }
    }

    private static String agentLabel() {
        return DockerCli.AGENT_LABEL + "=" + WorkerProcess.agentId();
    }

    /** Keeps the watchdog's list of this node's job processes current until the group is finished. */
    private void keepRegistry() {
        while (true) {
            try {
                Thread.sleep(Registry.EVERY_MS);
            } catch (InterruptedException e) {
                return;
            }
            synchronized (this) {
                if (finished) {
                    return;
                }
            }
            registry.sweep(workerPids());
        }
    }

    private synchronized List<Long> workerPids() {
        return workers.stream().map(WorkerProcess::pid).filter(p -> p > 0).toList();
    }

    /**
     * True when every worker is gone and nothing else descends from the agent (an adopted daemon,
     * say). As a subreaper the agent's own tree holds all of them; otherwise the machine's process
     * table is read for groups and tokens too.
     */
    private boolean allGone(List<WorkerProcess> snapshot) {
        if (Subreaper.active()) {
            // everything the workers started is among the agent's descendants: one walk of its own
            // tree answers, without reading every process of the machine (/proc/*/environ)
            return registry.sweep(workerPids()).isEmpty();
        }
        return WorkerProcess.allGone(snapshot) && registry.sweep(workerPids()).isEmpty();
    }

    /** TERM to every worker tree and adopted process, KILL to what is left after the grace period. */
    private void stop(List<WorkerProcess> snapshot) {
        Set<Long> signalled = new HashSet<>();
        snapshot.forEach(w -> signalled.addAll(w.terminate()));
        signalStrays(false, signalled);
        if (!WorkerProcess.waitUntil(() -> allGone(snapshot), graceMillis)) {
            snapshot.forEach(WorkerProcess::kill);
            signalStrays(true, Set.of());
        }
    }

    /** Signals every living descendant of the agent but those in {@code signalled} (one TERM per process: a second can cut a handler short). */
    private void signalStrays(boolean kill, Set<Long> signalled) {
        for (long pid : registry.sweep(workerPids())) {
            if (signalled.contains(pid)) {
                continue;
            }
            ProcessHandle.of(pid).ifPresent(h -> {
                if (kill) {
                    h.destroyForcibly();
                } else {
                    h.destroy();
                }
            });
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        while (latch != null) {
            try {
                latch.await();
                return;
            } catch (InterruptedException e) {
                // keep waiting
            }
        }
    }
}
