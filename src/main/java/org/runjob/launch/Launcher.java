package org.runjob.launch;

import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.logs.OutputRouter;
import org.runjob.plan.LaunchPlan;
import org.runjob.plan.NodePlan;
import org.runjob.protocol.Answer;
import org.runjob.protocol.Lease;
import org.runjob.session.AgentChannel;
import org.runjob.session.Event;
import org.runjob.session.Interrupts;
import org.runjob.session.NodeSession;
import org.runjob.session.NodeStarter;
import org.runjob.spec.NodeSpec;

/**
 * Runs a plan to the end: attempt after attempt while workers fail and {@code failure.max_restarts}
 * allows (a restart starts the whole group again, with RUNJOB_ATTEMPT and
 * TORCHELASTIC_RESTART_COUNT set to the attempt number), never after an interrupt, nor once the
 * backend says the nodes are gone ({@link NodeStarter#gone}: a cancelled Slurm job). Before a
 * restart, every node of the next attempt is health-checked ({@link Health}), and a spare stands in
 * for each node the failed attempt lost or that failed its check ({@link Spares}), where one fits;
 * the nodes taken out of the run are quarantined ({@link Quarantine}).
 */
public final class Launcher {

    private static final Logger LOG = LogManager.getLogger(Launcher.class);

    private final Interrupts interrupts;
    private final Clock clock;
    private final Map<String, NodeSession> started;
    private final NodeStarter starter;
    private final NodeProbes probes;
    private final StatusSink status;
    private final Map<String, Lease.Request> leases = new ConcurrentHashMap<>();
    private Spares spares = Spares.NONE;
    private Timeline timeline = Timeline.NONE;
    private Optional<Shrink> shrink = Optional.empty();
    private final Map<String, NodeSpec> everyNode = new ConcurrentHashMap<>();
    private Health health = Health.NONE;
    private Quarantine quarantine = Quarantine.NONE;
    private LaunchPlan lastPlan;
    private int firstAttempt;

    /**
     * @param started the agents preflight started (one per node), used by the first attempt
     * @param starter starts fresh agents for restarts
     */
    public Launcher(Interrupts interrupts, Clock clock, Map<String, NodeSession> started, NodeStarter starter) {
        this(interrupts, clock, started, starter, StatusSink.NONE);
    }

    /** @param status gets the run's live state (status.json) */
    public Launcher(Interrupts interrupts, Clock clock, Map<String, NodeSession> started, NodeStarter starter, StatusSink status) {
        this.status = status;
        this.interrupts = interrupts;
        this.clock = clock;
        this.started = new ConcurrentHashMap<>(started);
        this.starter = starter;
        this.probes = new NodeProbes(starter);
    }

    /**
     * GPU lease requests by node ({@link NodeSession#lease}): the agents a restart starts take
     * the leases of the GPUs the run uses again (the first attempt's agents hold them from preflight).
     */
    public Launcher withLeases(Map<String, Lease.Request> requests) {
        this.leases.putAll(requests);
        return this;
    }

    /** The job's spares: before a restart, one stands in for each node the attempt lost, where one fits. */
    public Launcher withSpares(Spares pool) {
        this.spares = pool;
        return this;
    }

    /** How a restart runs without lost nodes no spare replaced, where {@code failure.min_nodes} allows. */
    public Launcher withShrink(Shrink fewer) {
        this.shrink = Optional.of(fewer);
        return this;
    }

    /** How each node of a restart is checked before it runs ({@link Health}), and where the nodes a run must avoid go. */
    public Launcher withHealth(Health checks, Quarantine avoided) {
        this.health = checks;
        this.quarantine = avoided;
        return this;
    }

    /** Where each attempt's start and end, each stand-in and each wait for a node are reported as they happen. */
    public Launcher withTimeline(Timeline events) {
        this.timeline = events;
        return this;
    }

    /** The plan the last attempt ran: the first plan with the spares that stood in since. */
    public LaunchPlan lastPlan() {
        return lastPlan;
    }

    /** Numbers the first attempt {@code attempt}: a resumed run goes on from its last attempt. */
    public Launcher startingAt(int attempt) {
        this.firstAttempt = attempt;
        return this;
    }

    public List<AttemptResult> run(LaunchPlan plan, OutputRouter router) throws IOException {
        long grace = Math.round(plan.spec().failure().gracePeriodSeconds() * 1000);
        int maxRestarts = firstAttempt + plan.spec().failure().maxRestarts();
        List<AttemptResult> attempts = new ArrayList<>();
        LaunchPlan current = plan;
        plan.spec().withSparesAsNodes().nodes().forEach(n -> everyNode.put(n.name(), n));
        Map<String, String> lost = Map.of();
        for (int attempt = firstAttempt; ; attempt++) {
            List<StandIn> standIns = new ArrayList<>();
            List<String> dropped = new ArrayList<>();
            if (!attempts.isEmpty()) {
                Next next = recover(current, lost, attempt, standIns, dropped);
                current = next.plan();
                if (next.stuck().isPresent()) {
                    LOG.warn("{}", next.stuck().get());
                    AttemptResult last = attempts.remove(attempts.size() - 1).withNodesGone(next.stuck().get());
                    attempts.add(last);
                    LaunchPlan ran = current;
                    lost.forEach((node, why) -> quarantine(ran, node, "lost: " + why));
                    return ended(attempts);
                }
            }
            if (attempt > 0) {
                router.attempt(attempt);
            }
            lastPlan = current;
            timeline.attemptStarted(attempt, current.nodes().stream().map(NodePlan::name).toList());
            LaunchPlan running = current;
            AgentStarter agents = (node, events) -> startAgent(running, node, events);
            AttemptResult result = new Supervisor(current, attempt, agents, router, interrupts, clock, grace, status, node -> probes.suspect(running, node))
                    .run().withStandIns(standIns).withDropped(dropped);
            // a lost node may be the backend's doing (a cancelled or preempted Slurm job): say so, and never restart into it
            Optional<String> gone = result.succeeded() || result.interrupted() ? Optional.empty() : starter.gone();
            RecoveryPolicy.Next next = RecoveryPolicy.after(result, attempts.isEmpty() ? Optional.empty() : Optional.of(attempts.get(attempts.size() - 1)),
                    plan.spec().failure(), maxRestarts, gone);
            if (next instanceof RecoveryPolicy.Next.NodesGone g) {
                LOG.warn("{}: {}", g.why(), attempt < maxRestarts ? "no restart can use its nodes" : "its nodes are gone");
                result = result.withNodesGone(g.why());
            } else if (next instanceof RecoveryPolicy.Next.CrashLoop c) {
                LOG.warn("attempt {} failed as attempt {} did, soon after its start: a crash loop, no restart", attempt, attempt - 1);
                result = result.withCrashLoop(c.why());
            }
            boolean restart = next instanceof RecoveryPolicy.Next.Restart;
            Map<String, RecoveryPolicy.Fate> fates = result.succeeded() || result.interrupted() || result.nodesGone().isPresent()
                    ? Map.of() : probes.judge(current, result.lostNodes(), restart);
            probes.clear();
            attempts.add(result);
            timeline.attemptEnded(result);
            router.flush();
            if (!restart) {
                // no attempt follows: the nodes shown to be lost are avoided by the next runs
                LaunchPlan ran = current;
                fates.values().forEach(f -> RecoveryPolicy.quarantine(f).ifPresent(why -> quarantine(ran, f.node(), why)));
                return ended(attempts);
            }
            lost = RecoveryPolicy.lost(fates);
            LOG.warn("attempt {} failed ({}); restarting the whole group, attempt {} of {}", attempt,
                    result.rootCause().map(r -> "rank " + r.rank() + ": " + r.outcome().map(Outcome::describe).orElse("?"))
                            .orElse("?"), attempt + 1, maxRestarts);
        }
    }

    /** The run's attempts, once no attempt follows: agents started for an attempt that never came are closed. */
    private List<AttemptResult> ended(List<AttemptResult> attempts) {
        started.values().forEach(NodeSession::close);
        started.clear();
        return attempts;
    }

    /**
     * Before a restart: for the nodes shown to be {@code lost} (a fresh connection failed,
     * {@link NodeProbes#judge}), every node of the next attempt is health-checked ({@link Health}), and each lost
     * or unhealthy node is replaced by a spare, waited for ({@code wait_for_node_s}, lost nodes
     * only) or left out ({@code min_nodes}), in rounds until every node of the plan was checked.
     * Adds to {@code standIns} and {@code dropped} what it did.
     */
    private Next recover(LaunchPlan ran, Map<String, String> lost, int attempt, List<StandIn> standIns, List<String> dropped) {
        LaunchPlan current = ran;
        Map<String, String> out = new LinkedHashMap<>(lost);
        Map<String, String> unhealthy = new LinkedHashMap<>();
        Set<String> checked = new HashSet<>();
        boolean waited = false;
        while (true) {
            if (!out.isEmpty()) {
                Spares.Replaced replaced = spares.replace(current, out.keySet(), out::get, attempt);
                LaunchPlan before = current;
                current = replaced.plan();
                for (StandIn s : replaced.standIns()) {
                    if (lost.containsKey(s.node())) {
                        quarantine(before, s.node(), "lost: " + s.why());
                    }
                    standIns.add(s);
                    timeline.standIn(s);
                }
                for (Spares.Started s : replaced.started()) {
                    started.put(s.node(), s.session());
                    checked.add(s.node());
                    s.lease().ifPresent(r -> leases.put(s.node(), r));
                }
                if (!waited) {
                    awaitLost(current, lost.keySet());
                    waited = true;
                }
                Set<String> missing = missing(current, out.keySet());
                Optional<LaunchPlan> fewer = shrink.isPresent() ? shrink.get().without(current, missing) : Optional.empty();
                if (fewer.isPresent()) {
                    dropped.addAll(missing);
                    LOG.warn("attempt {} runs on {} of {} nodes, without {} (failure.min_nodes {}): world size {}, was {}", attempt,
                            fewer.get().nodes().size(), current.nodes().size(), String.join(", ", missing),
                            current.spec().failure().minNodes(), fewer.get().worldSize(), current.worldSize());
                    timeline.shrunk(attempt, List.copyOf(missing), fewer.get().worldSize());
                    for (String node : missing) {
                        if (lost.containsKey(node)) {
                            quarantine(current, node, "lost: " + lost.get(node));
                        }
                    }
                    boolean newMaster = !fewer.get().masterNode().equals(current.masterNode());
                    current = fewer.get();
                    if (newMaster) {
                        checkMaster(current);
                    }
                }
            }
            Map<String, String> found = checkHealth(current, checked, attempt);
            if (found.isEmpty()) {
                break;
            }
            unhealthy.putAll(found);
            out = found;
        }
        List<String> stuck = current.nodes().stream().map(NodePlan::name).filter(unhealthy::containsKey).toList();
        if (stuck.isEmpty()) {
            return new Next(current, Optional.empty());
        }
        return new Next(current, Optional.of(stuck.stream().map(n -> "node " + n + " failed its health check (" + unhealthy.get(n) + ")")
                .collect(Collectors.joining("; ")) + ": no spare fits its place and failure.min_nodes does not let the run go on without it,"
                + " so no attempt " + attempt + " runs"));
    }

    /** The next attempt's plan, or why no attempt can follow: an unhealthy node nothing lets the run go on without. */
    private record Next(LaunchPlan plan, Optional<String> stuck) {
    }

    /**
     * Health-checks each node of {@code plan} not in {@code checked} (adding it), all at once, on
     * the agent that runs its part of the next attempt (started now when it has none). A node
     * whose agent does not start is left to the attempt, which finds it lost as before. Returns
     * the unhealthy nodes with why, each quarantined, its agent closed.
     */
    private Map<String, String> checkHealth(LaunchPlan plan, Set<String> checked, int attempt) {
        List<NodePlan> todo = plan.nodes().stream().filter(n -> checked.add(n.name())).toList();
        Map<String, String> unhealthy = health.checkAll(plan, todo, started, name -> fresh(plan, name));
        Map<String, String> ordered = new LinkedHashMap<>();
        for (NodePlan node : todo) {
            String why = unhealthy.get(node.name());
            if (why != null) {
                ordered.put(node.name(), why);
                LOG.warn("node {} failed its health check before attempt {}: {}", node.name(), attempt, why);
                timeline.healthCheckFailed(attempt, node.name(), why);
                quarantine(plan, node.name(), "health check: " + why);
            }
        }
        return ordered;
    }

    private void quarantine(LaunchPlan plan, String node, String why) {
        plan.spec().node(node).or(() -> Optional.ofNullable(everyNode.get(node))).ifPresent(n -> {
            if (quarantine.add(n, why)) {
                timeline.quarantined(n.name(), why);
            }
        });
    }

    /** The lost nodes still in {@code plan} (no spare took their place) whose agent did not start again, in node-rank order. */
    private Set<String> missing(LaunchPlan plan, Set<String> lost) {
        Set<String> missing = new LinkedHashSet<>();
        for (NodePlan n : plan.nodes()) {
            if (lost.contains(n.name()) && !started.containsKey(n.name())) {
                missing.add(n.name());
            }
        }
        return missing;
    }


    /** A new master (the old one was dropped) binds the rendezvous port before the attempt; its agent runs the attempt. */
    private void checkMaster(LaunchPlan plan) {
        try {
            NodeSession session = fresh(plan, plan.masterNode());
            Answer listening = session.tryListen(plan.masterAddr(), plan.masterPort().orElse(0));
            started.put(plan.masterNode(), session);
            if (!listening.ok()) {
                LOG.warn("node {}, the master now, cannot bind the rendezvous port: {}", plan.masterNode(), listening.failure().orElse("?"));
            }
        } catch (IOException e) {
            LOG.warn("node {}, the master now, did not start: {}", plan.masterNode(), e.getMessage());
        }
    }

    /** The node's agent from preflight for the first attempt (or from a wait for it); a fresh one for a restart. */
    private AgentChannel startAgent(LaunchPlan plan, NodePlan node, BlockingQueue<Event> events) throws IOException {
        NodeSession session = started.remove(node.name());
        return (session == null ? fresh(plan, node.name()) : session).attach(events);
    }

    /** A new agent on node {@code name}, answering, with the GPU leases of the run's first agent there taken back. */
    private NodeSession fresh(LaunchPlan plan, String name) throws IOException {
        NodeSession session = starter.start(plan.spec().node(name).orElseThrow());
        try {
            session.hello(Supervisor.HELLO_TIMEOUT_MS);
            Lease.Request request = leases.get(name);
            if (request != null) {
                Lease.Answer answer = session.lease(request);
                if (!answer.held().isEmpty() || answer.error().isPresent()) {
                    LOG.warn("node {}: the restarted agent could not take every GPU lease back: {}", name,
                            answer.error().orElseGet(() -> answer.held().entrySet().stream()
                                    .map(e -> "GPU " + e.getKey() + " is held by " + e.getValue()).collect(Collectors.joining("; "))));
                }
            }
            return session;
        } catch (IOException e) {
            session.close();
            throw e;
        }
    }

    /**
     * Before a restart, up to {@code failure.wait_for_node_s}: each lost node that is still in the
     * plan (no spare took its place) is tried every 2 s until its agent starts there; the agent
     * that answers runs the node's part of the next attempt. A Ctrl-C ends the wait.
     */
    private void awaitLost(LaunchPlan plan, Set<String> lost) {
        int waitS = plan.spec().failure().waitForNodeSeconds();
        long deadline = System.nanoTime() + waitS * 1_000_000_000L;
        for (NodePlan node : plan.nodes()) {
            if (waitS == 0 || !lost.contains(node.name()) || started.containsKey(node.name())) {
                continue;
            }
            LOG.warn("node {} was lost and no spare stands in: waiting up to {} s for it to answer (failure.wait_for_node_s)", node.name(), waitS);
            long begin = System.nanoTime();
            while (interrupts.count() == 0) {
                try {
                    started.put(node.name(), fresh(plan, node.name()));
                    LOG.warn("node {} answers again: the restart runs there", node.name());
                    timeline.waitedForNode(node.name(), (System.nanoTime() - begin) / 1e9, true);
                    break;
                } catch (IOException e) {
                    if (System.nanoTime() > deadline) {
                        LOG.warn("node {} did not answer within {} s ({}): the restart goes on", node.name(), waitS, e.getMessage());
                        timeline.waitedForNode(node.name(), (System.nanoTime() - begin) / 1e9, false);
                        break;
                    }
                }
                try {
                    Thread.sleep(2000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
