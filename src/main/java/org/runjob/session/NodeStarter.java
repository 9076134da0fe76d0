package org.runjob.session;

import java.io.IOException;
import java.util.Map;
import java.util.Optional;

import org.runjob.node.Cluster;
import org.runjob.node.NodeException;
import org.runjob.protocol.AgentOptions;
import org.runjob.protocol.NodeJvm;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;

/**
 * Starts a node's agent for one command: the bootstrap on the node, reached through the job's
 * {@link Cluster} (a child process for a local node, an SSH login, a Slurm step). The agent is
 * told the node's workdir to check, and, for a run, the run id whose
 * workdir lock it takes.
 */
public final class NodeStarter {

    /** How long a start (bootstrap, jar transfer on first contact) may take. */
    static final int REMOTE_START_MS = 120_000;

    private final JobSpec spec;
    private final Cluster cluster;
    private final Map<String, String> env;
    private final Optional<String> runId;

    /** @param runId the run's id for a run; empty for commands that start nothing (check, gpus) */
    public NodeStarter(JobSpec spec, Cluster cluster, Map<String, String> env, Optional<String> runId) {
        this.spec = spec;
        this.cluster = cluster;
        this.env = Map.copyOf(env);
        this.runId = runId;
    }

    /** Why the job's nodes are gone for good, when its backend can tell ({@link Cluster#gone}). */
    public Optional<String> gone() {
        return cluster.gone();
    }

    /** Reaches the node (SSH login, Slurm allocation) and says how: its errors say what failed. "local" for local nodes. */
    public String reach(NodeSpec node) throws NodeException {
        return cluster.node(node).reach();
    }

    /** The node's address as other nodes use it, once reached; empty for local nodes. */
    public Optional<String> address(NodeSpec node) {
        return cluster.node(node).address();
    }

    /**
     * The address other nodes reach {@code node} at, as a new master's MASTER_ADDR: the one its
     * backend found, else its host, else 127.0.0.1 for a local node.
     */
    public Optional<String> reachedAt(NodeSpec node) {
        return address(node).or(() -> node.address().reachableAs()).or(() -> node.local() ? Optional.of("127.0.0.1") : Optional.empty());
    }

    /** Why a connection of its own to the node fails; empty when it answers ({@code NodeAccess.probe}). */
    public Optional<String> probe(NodeSpec node) {
        return cluster.node(node).probe();
    }

    /** Reaches the node afresh next time (it was lost): {@code NodeAccess.reset}. */
    public void reset(NodeSpec node) {
        cluster.node(node).reset();
    }

    /** Starts the node's agent (after {@link #reach}) with C1 alone; its HELLO is still to come. */
    public NodeSession start(NodeSpec node) throws IOException {
        return start(node, NodeJvm.Jit.QUICK);
    }

    /** The same, with {@code jit}'s compilers: {@link NodeJvm.Jit#FULL} for an agent that will receive much. */
    public NodeSession start(NodeSpec node, NodeJvm.Jit jit) throws IOException {
        AgentOptions options = new AgentOptions(Optional.of(spec.workdirOf(node)), runId,
                runId.map(r -> spec.name()), Optional.empty(), spec.ownRunDirOf(node, runId), cluster.agentVariables());
        return NodeSession.start(node.name(), cluster.node(node), PinnedJar.agent(), jit, options, REMOTE_START_MS, env);
    }
}
