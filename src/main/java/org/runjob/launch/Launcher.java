package org.runjob.launch;

import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.distribute.LocalDistributor;
import org.runjob.logs.OutputRouter;
import org.runjob.plan.LaunchPlan;
import org.runjob.plan.NodePlan;

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

    /** @param agentEnv the environment local agents (and so their workers) start with */
    public Launcher(Interrupts interrupts, Clock clock, Map<String, String> agentEnv) {
        this.interrupts = interrupts;
        this.clock = clock;
        this.agentEnv = Map.copyOf(agentEnv);
    }

    public List<AttemptResult> run(LaunchPlan plan, OutputRouter router) throws IOException {
        long grace = Math.round(plan.spec().failure().gracePeriodSeconds() * 1000);
        int maxRestarts = plan.spec().failure().maxRestarts();
        LocalDistributor distributor = new LocalDistributor();
        for (NodePlan node : plan.nodes()) {
            LocalDistributor.Shipped shipped = distributor.ship(node, agentEnv);
            LOG.debug("node {}: {} files ({} bytes) sent, {} unchanged ({} bytes)", node.name(), shipped.filesSent(),
                    shipped.bytesSent(), shipped.filesSkipped(), shipped.bytesSkipped());
        }
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
        if (!node.local()) {
            throw new IOException("node " + node.name() + " is remote; launching over SSH is not in this version");
        }
        return LocalAgentChannel.start(node.name(), events, agentEnv);
    }
}
