package org.runjob.launch;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.plan.LaunchPlan;
import org.runjob.plan.NodePlan;
import org.runjob.plan.PlanningException;
import org.runjob.protocol.Answer;
import org.runjob.protocol.Lease;
import org.runjob.session.NodeSession;
import org.runjob.session.NodeStarter;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;

/**
 * A run's spares ({@code spares:}), and how one takes a lost node's place for the next attempt.
 * A spare fits a node when, planned in its place, it runs as many workers (so every rank keeps its
 * number, and the world its size); it is used when its agent starts and answers, takes the GPU
 * leases the plan gives it, passes its health check ({@link Health}; one that fails is quarantined)
 * and, standing in for the master, binds the rendezvous port. A spare
 * that fails any of these is dropped from the pool, with its reason in the run's log. A spare
 * stands in once and then is a node of the run: it is never handed back.
 */
public final class Spares {

    private static final Logger LOG = LogManager.getLogger(Spares.class);

    /** The plan of a job whose nodes changed, with the facts preflight found and MASTER_ADDR {@code masterAddr}. */
    public interface Replanner {
        LaunchPlan plan(JobSpec spec, Optional<String> masterAddr) throws PlanningException;
    }

    /** The lease request for the GPUs a node of a plan uses; empty when it uses none or runjob does not lease. */
    public interface Leases {
        Optional<Lease.Request> of(NodePlan node);
    }

    /** The next attempt's plan, and the stand-ins made for it with each spare's started agent. */
    public record Replaced(LaunchPlan plan, List<StandIn> standIns, List<Started> started) {
        public Replaced {
            standIns = List.copyOf(standIns);
            started = List.copyOf(started);
        }
    }

    /** A spare's agent, started and holding its leases; {@code lease} is what a later restart takes again. */
    public record Started(String node, NodeSession session, Optional<Lease.Request> lease) {
    }

    /** No spares: nothing is ever replaced. */
    public static final Spares NONE = new Spares(List.of(), null, null, null);

    private final Health health;
    private final Quarantine quarantine;

    private final List<NodeSpec> pool;
    private final NodeStarter starter;
    private final Replanner replanner;
    private final Leases leases;

    public Spares(List<NodeSpec> spares, NodeStarter starter, Replanner replanner, Leases leases) {
        this(spares, starter, replanner, leases, Health.NONE, Quarantine.NONE);
    }

    /** @param health a spare must pass before it stands in; one that fails goes to {@code quarantine} */
    public Spares(List<NodeSpec> spares, NodeStarter starter, Replanner replanner, Leases leases, Health health, Quarantine quarantine) {
        this.health = health;
        this.quarantine = quarantine;
        this.pool = new ArrayList<>(spares);
        this.starter = starter;
        this.replanner = replanner;
        this.leases = leases;
    }

    /**
     * {@code plan} with a fitting, working spare in the place of each node of {@code lost} (in
     * node-rank order) that one is left for; the others stay, to be tried again as they are.
     *
     * @param why each lost node's reason, for the log and the record
     */
    public synchronized Replaced replace(LaunchPlan plan, Set<String> lost, Function<String, String> why, int attempt) {
        List<StandIn> made = new ArrayList<>();
        List<Started> started = new ArrayList<>();
        for (NodePlan node : plan.nodes()) {
            if (!lost.contains(node.name()) || pool.isEmpty()) {
                continue;
            }
            Optional<Candidate> found = firstFitting(plan, node);
            if (found.isEmpty()) {
                LOG.warn("node {} was lost ({}); no spare left fits its place", node.name(), why.apply(node.name()));
                continue;
            }
            Candidate c = found.get();
            plan = c.plan();
            started.add(c.started());
            StandIn s = new StandIn(c.spare().name(), node.name(), node.nodeRank(), attempt, why.apply(node.name()));
            made.add(s);
            LOG.warn("{}", s.describe());
        }
        return new Replaced(plan, made, started);
    }

    private record Candidate(NodeSpec spare, LaunchPlan plan, Started started) {
    }

    /**
     * Why each spare that fits no node's place never could stand in, as preflight found the
     * machines ({@code plan} gives each job, the spares planned on nodes' places): a spare that,
     * planned in any node's place, runs another number of workers than that node (a
     * {@code gpus: all} spare with fewer GPUs).
     */
    public static List<String> misfits(JobSpec spec, Replanner plan) {
        LaunchPlan base;
        try {
            base = plan.plan(spec, Optional.empty());
        } catch (PlanningException e) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (NodeSpec spare : spec.spares()) {
            Set<Integer> runs = new TreeSet<>();
            boolean fits = false;
            for (NodePlan node : base.nodes()) {
                try {
                    NodePlan in = plan.plan(spec.withStandIn(node.name(), spare), Optional.empty()).nodes().get(node.nodeRank());
                    runs.add(in.workers().size());
                    fits |= in.workers().size() == node.workers().size();
                } catch (PlanningException e) {
                    // it cannot be planned there: no fit
                }
            }
            if (!fits) {
                Set<Integer> nodes = new TreeSet<>();
                base.nodes().forEach(n -> nodes.add(n.workers().size()));
                out.add("spare " + spare.name() + " fits no node's place: it would run " + (runs.isEmpty() ? "nothing" : runs.stream()
                        .map(String::valueOf).collect(Collectors.joining(" or "))) + " where a node runs " + nodes.stream()
                        .map(String::valueOf).collect(Collectors.joining(" or ")) + " workers, so it can never stand in (give it a node's"
                        + " number of GPUs, or workers: N)");
            }
        }
        return out;
    }

    /** The first spare of the pool that fits {@code node}'s place and starts there, taken from the pool; the ones that fail are dropped. */
    private Optional<Candidate> firstFitting(LaunchPlan plan, NodePlan node) {
        for (NodeSpec spare : List.copyOf(pool)) {
            JobSpec spec = plan.spec().withStandIn(node.name(), spare);
            boolean master = plan.masterNode().equals(node.name());
            if (master && plan.spec().rendezvous().addr().isPresent()) {
                LOG.warn("spare {} cannot stand in for the master {}: rendezvous.addr names the master's address", spare.name(), node.name());
                return Optional.empty();
            }
            LaunchPlan next;
            try {
                // MASTER_ADDR: the spare's own address when it stands in for the master, else the plan's (a spare may be the master by now)
                next = replanner.plan(spec, master ? starter.reachedAt(spare) : Optional.of(plan.masterAddr()));
            } catch (PlanningException e) {
                LOG.warn("spare {} cannot stand in for node {}: {}", spare.name(), node.name(), e.getMessage());
                continue;
            }
            NodePlan in = next.nodes().get(node.nodeRank());
            if (in.workers().size() != node.workers().size()) {
                LOG.warn("spare {} does not fit node {}'s place: it runs {} worker{}, the node ran {}", spare.name(), node.name(),
                        in.workers().size(), in.workers().size() == 1 ? "" : "s", node.workers().size());
                continue;
            }
            pool.remove(spare);
            Optional<Started> started = start(spare, next, in, master);
            if (started.isPresent()) {
                return Optional.of(new Candidate(spare, next, started.get()));
            }
        }
        return Optional.empty();
    }

    /** The spare's agent, started and answering, with its leases; empty (and the agent closed) when any of it failed. */
    private Optional<Started> start(NodeSpec spare, LaunchPlan plan, NodePlan in, boolean master) {
        NodeSession session = null;
        try {
            session = starter.start(spare);
            session.hello(Supervisor.HELLO_TIMEOUT_MS);
            Optional<Lease.Request> request = leases.of(in);
            if (request.isPresent()) {
                Lease.Answer answer = session.lease(request.get());
                if (answer.error().isPresent() || !answer.held().isEmpty()) {
                    throw new IOException("its GPUs are not free: " + answer.error().orElseGet(answer.held()::toString));
                }
            }
            Optional<String> sick = health.check(session, spare, Health.used(in));
            if (sick.isPresent()) {
                quarantine.add(spare, "health check: " + sick.get());
                throw new IOException("it failed its health check: " + sick.get());
            }
            if (master) {
                Answer listening = session.tryListen(plan.masterAddr(), plan.masterPort().orElse(0));
                if (!listening.ok()) {
                    throw new IOException("as the master: " + listening.failure().orElse("cannot listen"));
                }
            }
            return Optional.of(new Started(in.name(), session, request));
        } catch (IOException e) {
            LOG.warn("spare {} cannot stand in: {}", spare.name(), e.getMessage());
            if (session != null) {
                session.close();
            }
            return Optional.empty();
        }
    }
}
