package org.runjob.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.logs.OutputRouter;
import org.runjob.plan.LaunchPlan;
import org.runjob.plan.NodePlan;
import org.runjob.plan.WorkerLaunch;
import org.runjob.protocol.Exit;
import org.runjob.protocol.Frame;
import org.runjob.session.AgentChannel;
import org.runjob.session.Event;
import org.runjob.session.Interrupts;
import org.runjob.spec.JobSpec;

/**
 * Runs one attempt of a plan and decides, alone, every worker's state. Policy: fail fast.
 *
 * <ol>
 *   <li>Start one agent per node and send it its workers.</li>
 *   <li>Events arrive on one queue and are handled on this thread, in order: STARTED makes a worker
 *       running; output goes to the {@link OutputRouter}; an exit with code 0 makes it succeeded.</li>
 *   <li>The first worker that exits non-zero, dies by a signal or cannot start, or whose node is
 *       lost, is the root cause: every agent is told STOP (SIGTERM to each worker tree, SIGKILL after
 *       the grace period). SupervisedWorkers the agents stopped end as stopped; others that fail meanwhile
 *       as failed.</li>
 *   <li>With {@code failure.hang_timeout_s}, an attempt in which no rank printed for that long is
 *       hung ({@link StackWatch}): every rank's stacks are saved, and the rank that stood out is
 *       the root cause. {@link StackWatch} also serves {@code runjob stacks}.</li>
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
    private final Map<Integer, SupervisedWorker> workers = new LinkedHashMap<>();
    private final Map<String, AgentChannel> agents = new LinkedHashMap<>();
    /** Why an agent stopped its workers on its own, by node. */
    private final Map<String, String> agentStops = new HashMap<>();
    /** Events that arrived while agents were still starting, for the main loop. */
    private final List<Event> early = new ArrayList<>();
    private SupervisedWorker rootCause;
    private boolean interrupted;
    private int interruptsSeen;
    private final Escalation escalation;
    /** The heartbeat's thread, from the agents' start to the attempt's end. */
    private Liveness liveness;
    private final Consumer<String> suspect;
    private final StatusSink status;
    /** The published status is out of date: a state changed, or output came. */
    private boolean changed = true;
    private boolean outputSince;
    private long lastPublish;
    private final StackWatch stacks;
    /** System.nanoTime() of the last output or start of any rank: what the hang timeout measures. */
    private long lastActivity = System.nanoTime();
    /** Once the hang capture is complete: the hang, and the rank that carries it. */
    private Outcome.Hung hang;
    private int hangRank = -1;

    Supervisor(LaunchPlan plan, int attempt, AgentStarter starter, OutputRouter router, Interrupts interrupts,
               Clock clock, long graceMillis, StatusSink status) {
        this(plan, attempt, starter, router, interrupts, clock, graceMillis, status, node -> { });
    }

    /** @param suspect told the node of an agent silent for half the heartbeat timeout ({@link Liveness}); it must not block */
    Supervisor(LaunchPlan plan, int attempt, AgentStarter starter, OutputRouter router, Interrupts interrupts,
               Clock clock, long graceMillis, StatusSink status, Consumer<String> suspect) {
        this.suspect = suspect;
        this.status = status;
        this.plan = plan;
        this.attempt = attempt;
        this.starter = starter;
        this.router = router;
        this.interrupts = interrupts;
        this.clock = clock;
        this.graceMillis = graceMillis;
        this.escalation = new Escalation(System::nanoTime, graceMillis);
        plan.workers().forEach(w -> workers.put(w.rank(), new SupervisedWorker(w)));
        this.stacks = new StackWatch(router.folder(), attempt, plan.spec().failure().hangTimeoutSeconds(), this::sendAll, this::hung);
    }

    AttemptResult run() {
        Instant begin = clock.instant();
        interrupts.onRaise(() -> events.offer(new Event.Interrupted())); // a wake-up only: interrupts are read from the counter
        JobSpec.FailureSpec failure = plan.spec().failure();
        liveness = new Liveness(PING_EVERY_MS, failure.heartbeatTimeoutMillis(), suspect);
        startAgents();
        agents.values().forEach(liveness::watch);
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
                heartbeats();
                stacks.tick(this::running, lastActivity, escalation.stopping());
                // step marks carry their agents' wall-clock times: windows are judged on the same clock
                router.tick(Instant.now());
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
            liveness.close();
            agents.values().forEach(AgentChannel::close);
            stacks.close();
        }
        List<RankResult> results = new ArrayList<>();
        for (SupervisedWorker w : workers.values()) {
            if (!w.state.ended()) {
                end(w, WorkerState.LOST, new Outcome.Lost("no exit was reported"));
            }
            results.add(w.result());
        }
        publish();
        Optional<RankResult> cause = rootCause == null ? Optional.empty()
                : results.stream().filter(r -> r.rank() == rootCause.launch.rank()).findFirst();
        return new AttemptResult(attempt, begin, clock.instant(), results, cause, interrupted, interrupted ? interrupts.explained() : Optional.empty());
    }

    /** Starts every agent ({@link AgentStartup}); a node that fails the start loses its workers and stops the rest. */
    private void startAgents() {
        AgentStartup.Result r = new AgentStartup(plan, starter, events, interrupts,
                node -> AgentStartup.startPayload(node, attempt, plan.spec().failure(), graceMillis, plan.spec().observe().intervalMillis(),
                        plan.spec().observe().sources()), new AgentStartup.Failures() {
                    @Override
                    public void lost(NodePlan node, String why) {
                        lose(node.name(), why);
                    }

                    @Override
                    public void notStarted(NodePlan node, String failure) {
                        for (WorkerLaunch w : node.workers()) {
                            end(workers.get(w.rank()), WorkerState.STOPPED,
                                    new Outcome.NotStarted("the job stopped before its workers started: " + failure));
                        }
                    }
                }).run(interruptsSeen);
        agents.putAll(r.agents());
        early.addAll(r.early());
        if (r.interrupted()) {
            interruptsSeen = interrupts.count();
            interrupted = true;
        }
    }

    private void handle(Event event) {
        if (event instanceof Event.Started s) {
            SupervisedWorker w = workers.get(s.rank());
            w.pid = OptionalLong.of(s.pid());
            w.start = clock.instant();
            lastActivity = System.nanoTime();
            if (w.state.canBecome(WorkerState.RUNNING)) {
                w.state = WorkerState.RUNNING; // a late STARTED never revives a worker that already ended
            }
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
            lastActivity = System.nanoTime();
            outputSince = true;
        } else if (event instanceof Event.Metrics m) {
            router.metrics(m.node(), m.rank(), m.read(), m.lines(), m.skippedBytes());
        } else if (event instanceof Event.Sample g && g.gpus()) {
            router.gpuSample(g.node(), g.line());
        } else if (event instanceof Event.Sample s) {
            router.sample(s.node(), s.source(), s.line());
        } else if (event instanceof Event.Stack st) {
            stacks.received(st.rank(), st.id(), st.text());
        } else if (event instanceof Event.Exited x) {
            exited(workers.get(x.rank()), x.exit(), x.endedAtMillis());
        } else if (event instanceof Event.AgentDone d) {
            AgentChannel channel = agents.remove(d.node());
            liveness.forget(d.node());
            if (channel != null) {
                channel.close(); // null when a backstop already closed it by force
            }
            LOG.debug("node {}: agent done", d.node());
            lose(d.node(), "its agent finished without reporting this worker's exit");
        } else if (event instanceof Event.AgentLost l) {
            AgentChannel channel = agents.remove(l.node());
            liveness.forget(l.node());
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

    private void exited(SupervisedWorker w, Exit exit, long endedAtMillis) {
        if (w.launch.rank() == hangRank) {
            end(w, WorkerState.FAILED, hang);
            return;
        }
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
        w.programEnd = endedAtMillis;
        LOG.debug("rank {} {}: {}", w.launch.rank(), state.label(), outcome.describe());
        if (state == WorkerState.FAILED) {
            failed(w);
        }
    }

    /** The running ranks and their nodes. */
    private Map<Integer, String> running() {
        return workers.values().stream().filter(w -> w.state == WorkerState.RUNNING)
                .collect(Collectors.toMap(w -> w.launch.rank(), w -> w.launch.node(), (a, b) -> a, TreeMap::new));
    }

    /** The hang capture is complete: {@code rank} carries the hang as the root cause, and every worker stops. */
    private void hung(int rank, Outcome.Hung outcome) {
        hangRank = rank;
        hang = outcome;
        failed(workers.get(rank));
    }

    /** A backstop gives up on a node's agent: closed by force, its workers lost for {@code why}. */
    private void failNode(AgentChannel channel, String why) {
        LOG.warn("node {}: {}; closing it by force", channel.node(), why);
        channel.forceClose();
        agents.remove(channel.node());
        liveness.forget(channel.node());
        lose(channel.node(), why);
    }

    private void lose(String node, String reason) {
        for (SupervisedWorker w : workers.values()) {
            if (w.launch.node().equals(node) && !w.state.ended()) {
                end(w, WorkerState.LOST, new Outcome.Lost(reason));
                failed(w);
            }
        }
    }

    /** Hands the live state to the status sink (status.json). */
    private void publish() {
        List<StatusSink.Rank> ranks = new ArrayList<>();
        for (SupervisedWorker w : workers.values()) {
            ranks.add(new StatusSink.Rank(w.launch.rank(), w.launch.node(), w.state, w.pid, Optional.ofNullable(w.lastOutput)));
        }
        status.update(attempt, escalation.stopping(), ranks);
        changed = false;
        outputSince = false;
        lastPublish = System.nanoTime();
    }

    private void end(SupervisedWorker w, WorkerState state, Outcome outcome) {
        changed = true;
        w.state = state;
        w.outcome = outcome;
        w.end = clock.instant();
        router.finish(w.launch.rank());
        w.tail = router.stderrTail(w.launch.rank());
        w.bytes = router.bytes(w.launch.rank());
    }

    private void failed(SupervisedWorker w) {
        if (rootCause == null && !interrupted) {
            rootCause = w;
        } else if (rootCause != null && endedBefore(w, rootCause)) {
            LOG.debug("rank {}'s program ended before rank {}'s: it is the root cause", w.launch.rank(), rootCause.launch.rank());
            rootCause = w;
        }
        stop();
    }

    /**
     * True when both failed on their own (not a hang, not a lost node) and {@code a}'s program
     * ended first by the agents' clocks: a failure reported late (its runtime slow to tear down,
     * its pipes held by a helper) is still the cause of the failures it brought about.
     */
    private boolean endedBefore(SupervisedWorker a, SupervisedWorker b) {
        return a.state == WorkerState.FAILED && b.state == WorkerState.FAILED && a.launch.rank() != hangRank && b.launch.rank() != hangRank
                && a.programEnd > 0 && b.programEnd > 0 && a.programEnd < b.programEnd;
    }

    private void stop() {
        if (escalation.stop()) {
            changed = true;
            sendAll(Frame.of(Frame.Type.STOP));
        }
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
        if (!escalation.stopping()) {
            LOG.warn("{}: stopping every worker (again to kill at once)", interrupts.reason().orElse("interrupted"));
            stop();
        } else if (count >= 2) {
            LOG.warn("interrupted again: killing every worker now");
            killNow();
        }
    }

    private void killNow() {
        if (escalation.kill()) {
            sendAll(Frame.of(Frame.Type.KILL));
        }
    }

    private void backstops() {
        Escalation.Step due = escalation.due();
        if (due == Escalation.Step.KILL) {
            killNow();
        }
        if (due == Escalation.Step.FORCE) {
            List.copyOf(agents.values()).forEach(channel -> failNode(channel, "its agent did not answer after KILL"));
        }
    }

    /**
     * Heartbeats, both ways, sent and judged by {@link Liveness} on its own thread: an agent that
     * hears nothing for {@code failure.heartbeat_timeout_s} stops its workers; an agent that
     * answers no PING (sends nothing at all) for as long is failed here, so a stopped or hung
     * agent, or a link that died without closing, ends the attempt instead of stalling it. Whether
     * its node is lost is decided after the attempt, on a fresh connection ({@link RecoveryPolicy}).
     */
    private void heartbeats() {
        for (AgentChannel c : liveness.silent()) {
            if (agents.get(c.node()) == c) {
                failNode(c, "its agent answered no heartbeat for " + plan.spec().failure().heartbeatTimeoutSeconds()
                        + " s (stopped, hung, or its link is gone)");
            }
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
}
