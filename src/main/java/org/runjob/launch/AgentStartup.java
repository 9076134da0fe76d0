package org.runjob.launch;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.node.FanOut;
import org.runjob.plan.LaunchPlan;
import org.runjob.plan.NodePlan;
import org.runjob.plan.WorkerLaunch;
import org.runjob.protocol.Frame;
import org.runjob.protocol.StartRequest;
import org.runjob.protocol.WorkerStart;
import org.runjob.session.AgentChannel;
import org.runjob.session.Event;
import org.runjob.session.Interrupts;
import org.runjob.spec.JobSpec;

/**
 * An attempt's start: every node's agent at once through {@link FanOut} (an SSH exec channel or a child process each: a
 * round trip or a JVM start per node, which would otherwise add up), then, only when every agent
 * has said HELLO (its JVM runs), each its START. If any agent cannot start, no START goes
 * anywhere: the agents that did start see their channel close and exit, and no worker runs on any
 * node. Every node that fails goes through one place, {@link Failures#lost}.
 */
final class AgentStartup {

    private static final Logger LOG = LogManager.getLogger(AgentStartup.class);

    /** What the supervisor does with a node's workers when the start goes wrong. */
    interface Failures {
        /** The node's agent failed (cannot start, ended, silent): its workers are lost, for {@code why}. */
        void lost(NodePlan node, String why);

        /** Another node failed first: the node's workers never start, because of {@code failure}. */
        void notStarted(NodePlan node, String failure);
    }

    /**
     * @param agents      the agents that were sent START, by node
     * @param early       events of agents that said HELLO, which came while others were still starting, in order
     * @param interrupted true when Ctrl-C came during the start
     */
    record Result(Map<String, AgentChannel> agents, List<Event> early, boolean interrupted) {
    }

    private final LaunchPlan plan;
    private final AgentStarter starter;
    private final BlockingQueue<Event> events;
    private final Interrupts interrupts;
    private final Function<NodePlan, byte[]> start;
    private final Failures failures;

    /** @param start a node's START payload */
    AgentStartup(LaunchPlan plan, AgentStarter starter, BlockingQueue<Event> events, Interrupts interrupts,
                 Function<NodePlan, byte[]> start, Failures failures) {
        this.plan = plan;
        this.starter = starter;
        this.events = events;
        this.interrupts = interrupts;
        this.start = start;
        this.failures = failures;
    }

    /** @param interruptsSeen the interrupts already seen when the attempt began */
    Result run(int interruptsSeen) {
        Map<String, AgentChannel> agents = new LinkedHashMap<>();
        List<Event> early = new ArrayList<>();
        boolean interrupted = false;
        try (FanOut fanOut = new FanOut(plan.nodes().size())) {
            Map<NodePlan, AgentChannel> started = new LinkedHashMap<>();
            String failure = null;
            for (Map.Entry<NodePlan, Start> e : fanOut.onEach(plan.nodes(), this::startAgent).entrySet()) {
                if (e.getValue().why() == null) {
                    started.put(e.getKey(), e.getValue().channel());
                } else {
                    failure = failNode(e.getKey(), "cannot start the node's agent: " + e.getValue().why(), failure);
                }
            }
            if (failure == null) {
                Hellos hellos = awaitHellos(started, early, interruptsSeen);
                failure = hellos.failure;
                interrupted = hellos.interrupted;
            }
            for (Map.Entry<NodePlan, AgentChannel> e : started.entrySet()) {
                NodePlan node = e.getKey();
                AgentChannel channel = e.getValue();
                if (failure == null) {
                    try {
                        channel.send(new Frame(Frame.Type.START, -1, start.apply(node)));
                        agents.put(node.name(), channel);
                        continue;
                    } catch (IOException ex) {
                        channel.forceClose();
                        // nodes already sent START are stopped by the fail-fast path like any failure
                        failure = failNode(node, "cannot reach the node's agent: " + ex.getMessage(), null);
                        continue;
                    }
                }
                channel.close();
                failures.notStarted(node, failure);
            }
        }
        return new Result(agents, early, interrupted);
    }

    /** A node's agent as it started: its channel, or why it did not. */
    private record Start(AgentChannel channel, String why) {
    }

    private Start startAgent(NodePlan node) {
        try {
            return new Start(starter.start(node, events), null);
        } catch (IOException e) {
            return new Start(null, e.getMessage());
        } catch (RuntimeException e) {
            return new Start(null, String.valueOf(e));
        }
    }

    /**
     * A node's START: its workers, with the attempt's variables added to each one's environment; its
     * GPUs and {@code sources} sampled every {@code sampleMillis} (0: never).
     */
    static byte[] startPayload(NodePlan node, int attempt, JobSpec.FailureSpec failure, long graceMillis, long sampleMillis,
                               List<String> sources) {
        List<WorkerStart> workers = new ArrayList<>();
        for (WorkerLaunch w : node.workers()) {
            Map<String, String> env = new LinkedHashMap<>(w.env());
            env.put("RUNJOB_ATTEMPT", Integer.toString(attempt));
            env.put("TORCHELASTIC_RESTART_COUNT", Integer.toString(attempt));
            env.put("TORCHELASTIC_MAX_RESTARTS", Integer.toString(failure.maxRestarts()));
            workers.add(new WorkerStart(w.rank(), w.argv(), env, node.workdir()));
        }
        return new StartRequest(workers, graceMillis, failure.heartbeatTimeoutMillis(), node.unset(), node.container(), sampleMillis,
                sources).encode();
    }

    /** The one way a node fails the start: logged, its workers lost; returns the attempt's failure (the first). */
    private String failNode(NodePlan node, String why, String failure) {
        LOG.error("node {}: {}", node.name(), why);
        failures.lost(node, why);
        return failure == null ? "node " + node.name() + "'s agent did not start" : failure;
    }

    private record Hellos(String failure, boolean interrupted) {
    }

    /**
     * Waits until every started agent has said HELLO (its JVM runs and reads frames). An agent that
     * exits first, or stays silent for {@value Supervisor#HELLO_TIMEOUT_MS} ms, fails the start.
     */
    private Hellos awaitHellos(Map<NodePlan, AgentChannel> started, List<Event> early, int interruptsSeen) {
        Map<String, NodePlan> waiting = new LinkedHashMap<>();
        started.keySet().forEach(n -> waiting.put(n.name(), n));
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Supervisor.HELLO_TIMEOUT_MS);
        while (!waiting.isEmpty()) {
            Event e;
            try {
                e = events.poll(100, TimeUnit.MILLISECONDS);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return new Hellos("runjob was interrupted", false);
            }
            if (interrupts.count() > interruptsSeen) {
                return new Hellos("runjob was interrupted", true);
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
                why = "its agent did not report ready within " + Supervisor.HELLO_TIMEOUT_MS / 1000 + " s";
            }
            if (node != null) {
                NodePlan failed = waiting.get(node);
                started.remove(failed).forceClose();
                return new Hellos(failNode(failed, why, null), false);
            }
        }
        return new Hellos(null, false);
    }
}
