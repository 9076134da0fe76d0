package org.runjob.launch;

import java.io.IOException;
import java.util.Map;
import java.util.Optional;

import org.runjob.agent.AgentOptions;
import org.runjob.spec.EntrypointSpec;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;
import org.runjob.transport.Connections;
import org.runjob.transport.SshException;
import org.runjob.transport.SshTarget;

/**
 * Starts a node's agent for one command: a local child process, or the bootstrap over the node's
 * SSH session (opened once per node by {@link Connections}). The agent is told the node's workdir
 * and the entrypoint's program to check, and, for a run, the run id whose workdir lock it takes.
 */
public final class NodeStarter {

    /** How long a remote start (bootstrap, jar transfer on first contact) may take. */
    static final int REMOTE_START_MS = 120_000;

    private final JobSpec spec;
    private final Connections connections;
    private final Map<String, String> env;
    private final Optional<String> runId;

    /** @param runId the run's id for a run; empty for commands that start nothing (check, gpus) */
    public NodeStarter(JobSpec spec, Connections connections, Map<String, String> env, Optional<String> runId) {
        this.spec = spec;
        this.connections = connections;
        this.env = Map.copyOf(env);
        this.runId = runId;
    }

    /** Opens the node's SSH session (login): its errors say what failed. A no-op for local nodes. */
    public Optional<com.jcraft.jsch.Session> login(NodeSpec node) throws SshException {
        if (node.local()) {
            return Optional.empty();
        }
        return Optional.of(connections.session(new SshTarget(node.name(), node.host().orElseThrow(), node.port(), node.user())));
    }

    /** Starts the node's agent (after {@link #login}); its HELLO is still to come. */
    public NodeSession start(NodeSpec node) throws IOException {
        AgentOptions options = new AgentOptions(Optional.of(node.workdir().orElse(spec.workdir())), Optional.of(program()), runId,
                runId.map(r -> spec.name()));
        if (node.local()) {
            return NodeSession.local(node.name(), env, options);
        }
        try {
            return NodeSession.remote(node.name(), login(node).orElseThrow(), AgentJar.current(), options, REMOTE_START_MS, env);
        } catch (SshException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    private String program() {
        return spec.entrypoint() instanceof EntrypointSpec.Command c ? c.argv().get(0) : "java";
    }
}
