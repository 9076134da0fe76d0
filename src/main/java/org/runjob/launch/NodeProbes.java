package org.runjob.launch;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.plan.LaunchPlan;
import org.runjob.session.NodeStarter;
import org.runjob.spec.NodeSpec;

/**
 * The evidence a lost node is judged by: each node whose agent went quiet or failed is tried on a
 * connection of its own ({@link NodeStarter#probe}), on suspicion while the attempt runs
 * ({@link #suspect}) or when the attempt ends ({@link #judge}), and only a node that fails that too
 * is lost ({@link RecoveryPolicy#fates}). One per {@link Launcher}; {@link #clear} forgets an
 * attempt's tries.
 */
final class NodeProbes {

    /** The launcher's own log name: what it says of a node is said as the launcher's. */
    private static final Logger LOG = LogManager.getLogger(Launcher.class);

    private final NodeStarter starter;

    NodeProbes(NodeStarter starter) {
        this.starter = starter;
    }

    /** Forgets the tries of the attempt that ended. */
    void clear() {
        probes.clear();
    }

    /**
     * A fresh connection's first failure that came faster than this is tried once more, a second
     * later: a refused login (sshd at MaxStartups, a restarting daemon). One that took longer (no
     * answer within the connect timeout) is the answer.
     */
    private static final long RETRY_UNDER_MS = 1000;

    /** The fresh connections tried to nodes whose agents went quiet or failed in this attempt, by node: what {@link #judge} reads. */
    private final Map<String, CompletableFuture<Optional<String>>> probes = new ConcurrentHashMap<>();
    private final ExecutorService probing = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "probe");
        t.setDaemon(true);
        return t;
    });

    /**
     * A node whose agent has been silent for half the heartbeat timeout: it is tried on a
     * connection of its own at once, in the background, so its answer is ready about when the
     * silence ends the attempt (a cut link costs the connect timeout once, not after the heartbeat
     * timeout). Called on the heartbeat's thread: it only starts the try.
     */
    void suspect(LaunchPlan plan, String node) {
        plan.spec().node(node).ifPresent(spec -> probes.computeIfAbsent(node, n -> {
            LOG.info("node {}: its agent has been silent for half the heartbeat timeout; trying the node on a connection of its own", n);
            return CompletableFuture.supplyAsync(() -> probe(spec), probing);
        }));
    }

    /**
     * Why a connection of its own to the node fails, a quick refusal tried once more a second
     * later; empty when it answers. A try that breaks in runjob itself is no evidence about the
     * node: logged, and read as an answer.
     */
    private Optional<String> probe(NodeSpec node) {
        try {
            long begin = System.nanoTime();
            Optional<String> why = starter.probe(node);
            if (why.isPresent() && System.nanoTime() - begin < RETRY_UNDER_MS * 1_000_000) {
                Thread.sleep(1000);
                why = starter.probe(node);
            }
            return why;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        } catch (RuntimeException e) {
            LOG.warn("node {}: cannot try it on a connection of its own ({}): not taken for lost", node.name(), e.toString());
            return Optional.empty();
        }
    }

    /**
     * What became of each node whose agent failed in the attempt ({@link RecoveryPolicy#fates}):
     * lost only when a connection of its own fails too (tried on suspicion during the attempt, or
     * now). Every such node is reached afresh by the next start (its old session dropped: a
     * session across a cut link may look open and never answer).
     */
    Map<String, RecoveryPolicy.Fate> judge(LaunchPlan plan, Map<String, String> agentFailures, boolean restart) {
        Map<String, CompletableFuture<Optional<String>>> pending = new LinkedHashMap<>();
        for (String node : agentFailures.keySet()) {
            Optional<NodeSpec> spec = plan.spec().node(node);
            CompletableFuture<Optional<String>> tried = probes.remove(node);
            pending.put(node, tried != null ? tried : spec.isEmpty() ? CompletableFuture.completedFuture(Optional.of("it is no node of the plan"))
                    : CompletableFuture.supplyAsync(() -> probe(spec.get()), probing));
        }
        Map<String, String> freshFailures = new LinkedHashMap<>();
        pending.forEach((node, tried) -> tried.join().ifPresent(why -> freshFailures.put(node, why)));
        agentFailures.keySet().forEach(node -> plan.spec().node(node).ifPresent(starter::reset));
        Map<String, RecoveryPolicy.Fate> fates = RecoveryPolicy.fates(agentFailures, freshFailures);
        fates.values().forEach(f -> {
            if (f instanceof RecoveryPolicy.Fate.Answers a) {
                LOG.warn("node {}: its agent failed ({}), but the node answers on a fresh connection: it is not lost{}", a.node(), a.agentFailure(),
                        restart ? "; the restart runs there" : "");
            } else if (f instanceof RecoveryPolicy.Fate.Lost l) {
                LOG.warn("node {} is lost: a fresh connection failed too ({})", l.node(), l.evidence());
            }
        });
        return fates;
    }
}
