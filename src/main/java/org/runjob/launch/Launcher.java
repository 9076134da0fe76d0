package org.runjob.launch;

import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.logs.OutputRouter;
import org.runjob.plan.LaunchPlan;
import org.runjob.plan.NodePlan;
import org.runjob.transport.Connections;
import org.runjob.transport.SshException;
import org.runjob.transport.SshTarget;

/**
 * Runs a plan to the end: attempt after attempt while workers fail and {@code failure.max_restarts}
 * allows (a restart starts the whole group again, with RUNJOB_ATTEMPT and
 * TORCHELASTIC_RESTART_COUNT set to the attempt number), never after an interrupt.
 */
public final class Launcher {

    private static final Logger LOG = LogManager.getLogger(Launcher.class);

    private final Interrupts interrupts;
    private final Clock clock;
    private final Map<String, String> agentEnv;
    private final Connections connections;

    /**
     * @param agentEnv    the environment local agents (and so their workers) start with
     * @param connections the remote nodes' sessions (opened by preflight)
     */
    public Launcher(Interrupts interrupts, Clock clock, Map<String, String> agentEnv, Connections connections) {
        this.interrupts = interrupts;
        this.clock = clock;
        this.agentEnv = Map.copyOf(agentEnv);
        this.connections = connections;
    }

    public List<AttemptResult> run(LaunchPlan plan, OutputRouter router) throws IOException {
        long grace = Math.round(plan.spec().failure().gracePeriodSeconds() * 1000);
        int maxRestarts = plan.spec().failure().maxRestarts();
        AgentStarter starter = this::startAgent;
        List<AttemptResult> attempts = new ArrayList<>();
        for (int attempt = 0; ; attempt++) {
            if (attempt > 0) {
                router.attempt(attempt);
            }
            AttemptResult result = new Supervisor(plan, attempt, starter, router, interrupts, clock, grace).run();
            attempts.add(result);
            router.flush();
            if (result.succeeded() || result.interrupted() || attempt >= maxRestarts) {
                return attempts;
            }
            LOG.warn("attempt {} failed ({}); restarting the whole group, attempt {} of {}", attempt,
                    result.rootCause().map(r -> "rank " + r.rank() + ": " + r.outcome().map(Outcome::describe).orElse("?"))
                            .orElse("?"), attempt + 1, maxRestarts);
        }
    }

    private AgentChannel startAgent(NodePlan node, java.util.concurrent.BlockingQueue<Event> events) throws IOException {
        if (node.local()) {
            return LocalAgentChannel.start(node.name(), events, agentEnv);
        }
        try {
            SshTarget target = new SshTarget(node.name(), node.host().orElseThrow(), node.sshPort(), node.user());
            return RemoteAgentChannel.start(node, connections.session(target), events);
        } catch (SshException e) {
            throw new IOException(e.getMessage(), e);
        }
    }
}
