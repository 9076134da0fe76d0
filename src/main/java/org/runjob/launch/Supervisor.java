package org.runjob.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.agent.Exit;
import org.runjob.agent.Frame;
import org.runjob.agent.StartRequest;
import org.runjob.agent.WorkerSpec;
import org.runjob.logs.OutputRouter;
import org.runjob.plan.LaunchPlan;
import org.runjob.plan.NodePlan;
import org.runjob.plan.WorkerLaunch;

/**
 * Runs one attempt of a plan and decides, alone, every worker's state. Policy: fail fast.
 *
 * <ol>
 *   <li>Start one agent per node and send it its workers.</li>
 *   <li>Events arrive on one queue and are handled on this thread, in order: STARTED makes a worker
 *       running; output goes to the {@link OutputRouter}; an exit with code 0 makes it succeeded.</li>
 *   <li>The first worker that exits non-zero, dies by a signal or cannot start, or whose node is
 *       lost, is the root cause: every agent is told STOP (SIGTERM to each worker tree, SIGKILL after
 *       the grace period). Workers the agents stopped end as stopped; others that fail meanwhile
 *       as failed.</li>
 *   <li>The first Ctrl-C / SIGTERM does the same stop and marks the attempt interrupted; the second
 *       sends KILL now.</li>
 *   <li>Backstops: agents that have not finished {@value #STOP_SLACK_MS} ms after the grace period
 *       get KILL; {@value #KILL_SLACK_MS} ms later their channels are closed by force and their
 *       workers killed by pid.</li>
 *   <li>The attempt ends when every agent has finished or been lost.</li>
 * </ol>
 */
final class Supervisor {

    static final long STOP_SLACK_MS = 5000;
    static final long IDLE_FLUSH_MS = 5;
    static final long PING_EVERY_MS = 2000;
    static final long HEARTBEAT_TIMEOUT_MS = 15_000;
    /** Agents started at once (each is an SSH round trip or a child JVM start). */
    static final int STARTER_THREADS = 32;
    static final long KILL_SLACK_MS = 5000;
    /** How long an agent may take from its start to HELLO (a JVM start on a loaded node). */
    static final long HELLO_TIMEOUT_MS = 60_000;
    private static final Logger LOG = LogManager.getLogger(Supervisor.class);

    private final LaunchPlan plan;
    private final int attempt;
    private final AgentStarter starter;
    private final OutputRouter router;
    private final Interrupts interrupts;
    private final Clock clock;
    private final long graceMillis;
    /**
     * Bounded: when the console or the disk is slower than the workers, the agents' readers wait
     * and the output waits in the agents' spools (which spill to disk), not in runjob's memory
     * (at most this many chunks of at most 64 KiB).
     */
    static final int EVENT_CAPACITY = 1024;
    private final BlockingQueue<Event> events = new LinkedBlockingQueue<>(EVENT_CAPACITY);
    private final Map<Integer, Worker> workers = new LinkedHashMap<>();
    private final Map<String, AgentChannel> agents = new LinkedHashMap<>();
    /** Why an agent stopped its workers on its own, by node. */
    private final Map<String, String> agentStops = new java.util.HashMap<>();
    /** Events that arrived while agents were still starting, for the main loop. */
    private final List<Event> early = new ArrayList<>();
    private Worker rootCause;
    private boolean interrupted;
    private int interruptsSeen;
    private long stopAt = -1;
    private long killAt = -1;
    private long forceAt = -1;
    private long lastPing = System.nanoTime();
    private final StatusSink status;
    /** The published status is out of date: a state changed, or output came. */
    private boolean changed = true;
    private boolean outputSince;
    private long lastPublish;

    /** Mutable only here, on the supervisor's thread. */
    private static final class Worker {
        final WorkerLaunch launch;
        WorkerState state = WorkerState.STARTING;
        OptionalLong pid = OptionalLong.empty();
        Instant start;
        Instant end;
        Outcome outcome;
        List<String> tail = List.of();
        Instant lastOutput;
        Optional<String> errorFile = Optional.empty();
        long[] bytes = new long[2];

        Worker(WorkerLaunch launch) {
            this.launch = launch;
        }
    }

    Supervisor(LaunchPlan plan, int attempt, AgentStarter starter, OutputRouter router, Interrupts interrupts,
               Clock clock, long graceMillis) {
        this(plan, attempt, starter, router, interrupts, clock, graceMillis, StatusSink.NONE);
    }

    Supervisor(LaunchPlan plan, int attempt, AgentStarter starter, OutputRouter router, Interrupts interrupts,
               Clock clock, long graceMillis, StatusSink status) {
        this.status = status;
        this.plan = plan;
        this.attempt = attempt;
        this.starter = starter;
        this.router = router;
        this.interrupts = interrupts;
        this.clock = clock;
        this.graceMillis = graceMillis;
        plan.workers().forEach(w -> workers.put(w.rank(), new Worker(w)));
    }

    AttemptResult run() {
        Instant begin = clock.instant();
        interrupts.onRaise(() -> events.offer(new Event.Interrupted())); // a wake-up only: interrupts are read from the counter
        startAgents();
        early.forEach(this::handle);
        publish();
        try {
            while (!agents.isEmpty()) {
                // under load, write in batches; after 5 ms without events, flush so output shows at once
                Event e = events.poll();
                if (e == null) {
                    e = events.poll(IDLE_FLUSH_MS, TimeUnit.MILLISECONDS);
                }
                if (e == null) {
                    flushOutput();
                    e = events.poll(100, TimeUnit.MILLISECONDS);
                }
                if (e != null) {
                    handle(e);
                }
                checkInterrupts();
                backstops();
                ping();
                // a burst of changes (200 workers starting) is one rewrite of status.json, not 200
                long sincePublish = System.nanoTime() - lastPublish;
                if ((changed && (events.isEmpty() || sincePublish > 200_000_000L)) || (outputSince && sincePublish > 1_000_000_000L)) {
                    publish();
                }
            }
            // output that arrived before the agents' last frames
            Event e;
            while ((e = events.poll()) != null) {
                handle(e);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            agents.values().forEach(AgentChannel::forceClose);
        } finally {
            interrupts.onRaise(() -> { });
            agents.values().forEach(AgentChannel::close);
        }
        List<RankResult> results = new ArrayList<>();
        for (Worker w : workers.values()) {
            if (!w.state.ended()) {
                end(w, WorkerState.LOST, new Outcome.Lost("no exit was reported"));
            }
            results.add(result(w));
        }
        publish();
        Optional<RankResult> cause = rootCause == null ? Optional.empty()
                : results.stream().filter(r -> r.rank() == rootCause.launch.rank()).findFirst();
        return new AttemptResult(attempt, begin, clock.instant(), results, cause, interrupted);
    }

    /**
     * Starts every node's agent at once (an SSH exec channel or a child JVM each: a round trip or a
     * JVM start per node, which in turn would add up), then, only when every agent has said HELLO
     * (its JVM runs), sends each its START. If any agent cannot start, no START goes anywhere: the agents that did start
     * see their channel close and exit, and no worker runs on any node.
     */
    private void startAgents() {
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(STARTER_THREADS, plan.nodes().size()), r -> {
            Thread t = new Thread(r, "agent-start");
            t.setDaemon(true);
            return t;
        });
        Map<NodePlan, Future<AgentChannel>> starting = new LinkedHashMap<>();
        try {
            for (NodePlan node : plan.nodes()) {
                starting.put(node, pool.submit(() -> starter.start(node, events)));
            }
            Map<NodePlan, AgentChannel> started = new LinkedHashMap<>();
            String failure = null;
            for (Map.Entry<NodePlan, Future<AgentChannel>> e : starting.entrySet()) {
                try {
                    started.put(e.getKey(), e.getValue().get());
                } catch (ExecutionException ex) {
                    String why = ex.getCause() instanceof IOException io ? io.getMessage() : String.valueOf(ex.getCause());
                    LOG.error("node {}: cannot start its agent: {}", e.getKey().name(), why);
                    for (WorkerLaunch w : e.getKey().workers()) {
                        Worker worker = workers.get(w.rank());
                        end(worker, WorkerState.LOST, new Outcome.Lost("cannot start the node's agent: " + why));
                        failed(worker);
                    }
                    failure = failure == null ? "node " + e.getKey().name() + "'s agent did not start" : failure;
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    failure = failure == null ? "runjob was interrupted" : failure;
                }
            }
            if (failure == null) {
                failure = awaitHellos(started);
            }
            for (Map.Entry<NodePlan, AgentChannel> e : started.entrySet()) {
                NodePlan node = e.getKey();
                AgentChannel channel = e.getValue();
                if (failure == null) {
                    try {
                        channel.send(new Frame(Frame.Type.START, -1, new StartRequest(specs(node), graceMillis, HEARTBEAT_TIMEOUT_MS).encode()));
                        agents.put(node.name(), channel);
                        continue;
                    } catch (IOException ex) {
                        LOG.error("node {}: cannot reach its agent: {}", node.name(), ex.getMessage());
                        failure = "node " + node.name() + "'s agent did not answer";
                        channel.forceClose();
                        for (WorkerLaunch w : node.workers()) {
                            Worker worker = workers.get(w.rank());
                            end(worker, WorkerState.LOST, new Outcome.Lost("cannot reach the node's agent: " + ex.getMessage()));
                            failed(worker);
                        }
                        // nodes already sent START are stopped by the fail-fast path like any failure
                        continue;
                    }
                }
                channel.close();
                for (WorkerLaunch w : node.workers()) {
                    end(workers.get(w.rank()), WorkerState.STOPPED,
                            new Outcome.NotStarted("the job stopped before its workers started: " + failure));
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Waits until every started agent has said HELLO (its JVM runs and reads frames). An agent that
     * exits first, or stays silent for {@value #HELLO_TIMEOUT_MS} ms, fails the start: its workers
     * are lost with the reason, and the failure is returned (null when all said HELLO).
     */
    private String awaitHellos(Map<NodePlan, AgentChannel> started) {
        Map<String, NodePlan> waiting = new LinkedHashMap<>();
        started.keySet().forEach(n -> waiting.put(n.name(), n));
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HELLO_TIMEOUT_MS);
        while (!waiting.isEmpty()) {
            Event e;
            try {
                e = events.poll(100, TimeUnit.MILLISECONDS);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return "runjob was interrupted";
            }
            if (interrupts.count() > interruptsSeen) {
                interruptsSeen = interrupts.count();
                interrupted = true;
                return "runjob was interrupted";
            }
            String why = null;
            String node = null;
            if (e instanceof Event.Hello h) {
                waiting.remove(h.node());
            } else if (e != null && !waiting.containsKey(e.node())) {
                early.add(e); // an agent that already said HELLO: handled by the main loop, in order
            } else if (e instanceof Event.AgentLost l && waiting.containsKey(l.node())) {
                node = l.node();
                why = "its agent ended before it was ready (" + l.reason() + "; its stderr is in runjob.log)";
            } else if (e instanceof Event.AgentDone d && waiting.containsKey(d.node())) {
                node = d.node();
                why = "its agent ended before it was ready";
            } else if (System.nanoTime() > deadline) {
                node = waiting.keySet().iterator().next();
                why = "its agent did not report ready within " + HELLO_TIMEOUT_MS / 1000 + " s";
            }
            if (node != null) {
                LOG.error("node {}: {}", node, why);
                started.remove(waiting.get(node)).forceClose();
                for (WorkerLaunch w : waiting.get(node).workers()) {
                    Worker worker = workers.get(w.rank());
                    end(worker, WorkerState.LOST, new Outcome.Lost(why));
                    failed(worker);
                }
                return "node " + node + "'s agent did not start";
            }
        }
        return null;
    }

    private List<WorkerSpec> specs(NodePlan node) {
        List<WorkerSpec> specs = new ArrayList<>();
        for (WorkerLaunch w : node.workers()) {
            Map<String, String> env = new LinkedHashMap<>(w.env());
            env.put("RUNJOB_ATTEMPT", Integer.toString(attempt));
            env.put("TORCHELASTIC_RESTART_COUNT", Integer.toString(attempt));
            env.put("TORCHELASTIC_MAX_RESTARTS", Integer.toString(plan.spec().failure().maxRestarts()));
            specs.add(new WorkerSpec(w.rank(), w.argv(), env, node.workdir()));
        }
        return specs;
    }

    private void handle(Event event) {
        if (event instanceof Event.Started s) {
            Worker w = workers.get(s.rank());
            w.pid = OptionalLong.of(s.pid());
            w.start = clock.instant();
            w.state = WorkerState.RUNNING;
            changed = true;
            LOG.debug("rank {} on {} started, pid {}", s.rank(), s.node(), s.pid());
            try {
                router.started(s.node(), s.rank());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        } else if (event instanceof Event.ErrorFile ef) {
            workers.get(ef.rank()).errorFile = Optional.of(ef.json());
        } else if (event instanceof Event.Notice n) {
            LOG.warn("node {}: {}", n.node(), n.text());
            agentStops.put(n.node(), n.text());
        } else if (event instanceof Event.Output o) {
            router.output(o.node(), o.rank(), o.stderr(), o.bytes());
            workers.get(o.rank()).lastOutput = clock.instant();
            outputSince = true;
        } else if (event instanceof Event.Exited x) {
            exited(workers.get(x.rank()), x.exit());
        } else if (event instanceof Event.AgentDone d) {
            AgentChannel channel = agents.remove(d.node());
            if (channel != null) {
                channel.close(); // null when a backstop already closed it by force
            }
            LOG.debug("node {}: agent done", d.node());
            lose(d.node(), "its agent finished without reporting this worker's exit");
        } else if (event instanceof Event.AgentLost l) {
            AgentChannel channel = agents.remove(l.node());
            if (channel != null) {
                channel.forceClose();
            }
            LOG.warn("node {} lost: {}", l.node(), l.reason());
            lose(l.node(), "node " + l.node() + " lost (" + l.reason() + ")");
        }
    }

    private void flushOutput() {
        try {
            router.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void exited(Worker w, Exit exit) {
        String agentStop = agentStops.get(w.launch.node());
        if (exit.stoppedByAgent() && agentStop != null) {
            // the agent stopped it on its own (no heartbeat): not the worker's doing, not ours
            end(w, WorkerState.LOST, new Outcome.Lost("stopped by its agent: " + agentStop.replaceFirst(": stopping every worker$", "")));
            failed(w);
            return;
        }
        Outcome outcome = Outcome.of(exit);
        WorkerState state = outcome.success() ? WorkerState.SUCCEEDED
                : exit.stoppedByAgent() ? WorkerState.STOPPED : WorkerState.FAILED;
        if (w.start == null) {
            w.start = clock.instant();
        }
        end(w, state, outcome);
        LOG.debug("rank {} {}: {}", w.launch.rank(), state.label(), outcome.describe());
        if (state == WorkerState.FAILED) {
            failed(w);
        }
    }

    private void lose(String node, String reason) {
        for (Worker w : workers.values()) {
            if (w.launch.node().equals(node) && !w.state.ended()) {
                end(w, WorkerState.LOST, new Outcome.Lost(reason));
                failed(w);
            }
        }
    }

    /** Hands the live state to the status sink (status.json). */
    private void publish() {
        List<StatusSink.Rank> ranks = new ArrayList<>();
        for (Worker w : workers.values()) {
            ranks.add(new StatusSink.Rank(w.launch.rank(), w.launch.node(), w.state, Optional.ofNullable(w.lastOutput)));
        }
        status.update(attempt, stopAt >= 0, ranks);
        changed = false;
        outputSince = false;
        lastPublish = System.nanoTime();
    }

    private void end(Worker w, WorkerState state, Outcome outcome) {
        changed = true;
        w.state = state;
        w.outcome = outcome;
        w.end = clock.instant();
        router.finish(w.launch.rank());
        w.tail = router.stderrTail(w.launch.rank());
        w.bytes = router.bytes(w.launch.rank());
    }

    private void failed(Worker w) {
        if (rootCause == null && !interrupted) {
            rootCause = w;
        }
        stop();
    }

    private void stop() {
        if (stopAt >= 0) {
            return;
        }
        stopAt = System.nanoTime();
        changed = true;
        killAt = stopAt + TimeUnit.MILLISECONDS.toNanos(graceMillis + STOP_SLACK_MS);
        sendAll(Frame.of(Frame.Type.STOP));
    }

    private void checkInterrupts() {
        int count = interrupts.count();
        if (count == interruptsSeen) {
            return;
        }
        interruptsSeen = count;
        if (rootCause == null) {
            interrupted = true;
        }
        if (stopAt < 0) {
            LOG.warn("interrupted: stopping every worker (again to kill at once)");
            stop();
        } else if (count >= 2) {
            LOG.warn("interrupted again: killing every worker now");
            killNow();
        }
    }

    private void killNow() {
        if (forceAt < 0) {
            forceAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(KILL_SLACK_MS);
            sendAll(Frame.of(Frame.Type.KILL));
        }
    }

    private void backstops() {
        long now = System.nanoTime();
        if (killAt >= 0 && now > killAt) {
            killNow();
        }
        if (forceAt >= 0 && now > forceAt) {
            for (AgentChannel channel : List.copyOf(agents.values())) {
                LOG.warn("node {}: agent did not finish; closing it by force", channel.node());
                channel.forceClose();
                agents.remove(channel.node());
                lose(channel.node(), "its agent did not answer after KILL");
            }
        }
    }

    /** Heartbeats: an agent that hears nothing for {@value #HEARTBEAT_TIMEOUT_MS} ms stops its workers. */
    private void ping() {
        if (System.nanoTime() - lastPing > TimeUnit.MILLISECONDS.toNanos(PING_EVERY_MS)) {
            lastPing = System.nanoTime();
            sendAll(Frame.of(Frame.Type.PING));
        }
    }

    private void sendAll(Frame frame) {
        for (AgentChannel channel : agents.values()) {
            try {
                channel.send(frame);
            } catch (IOException e) {
                LOG.debug("node {}: cannot send {}: {}", channel.node(), frame.type(), e.getMessage());
            }
        }
    }

    private static RankResult result(Worker w) {
        return new RankResult(w.launch.rank(), w.launch.localRank(), w.launch.node(), w.pid, w.start, w.end, w.state,
                Optional.ofNullable(w.outcome), w.bytes[0], w.bytes[1], w.tail, w.errorFile);
    }
}
