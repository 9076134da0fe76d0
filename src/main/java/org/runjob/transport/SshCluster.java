package org.runjob.transport;

import java.io.OutputStream;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.jcraft.jsch.Session;
import org.runjob.node.Cluster;
import org.runjob.node.NodeAccess;
import org.runjob.node.NodeException;
import org.runjob.node.NodeProcess;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeAddress;
import org.runjob.spec.NodeSpec;

/** The job's SSH nodes: one session per node (opened on first use, with the job's ssh settings), closed together. */
public final class SshCluster implements Cluster {

    private final Connections connections;

    public SshCluster(JobSpec.SshSpec ssh, Map<String, String> env) {
        this.connections = new Connections(new SshConnector(ssh, env));
    }

    @Override
    public NodeAccess node(NodeSpec node) {
        if (!(node.address() instanceof NodeAddress.Ssh ssh)) {
            throw new IllegalArgumentException("node " + node.name() + " is not an SSH node");
        }
        return new SshNode(new SshTarget(node.name(), ssh.host(), ssh.port(), ssh.user()));
    }

    @Override
    public void close() {
        connections.close();
    }

    /** One SSH node: its session is the cluster's. */
    private final class SshNode implements NodeAccess {
        private final SshTarget target;

        SshNode(SshTarget target) {
            this.target = target;
        }

        @Override
        public String reach() throws NodeException {
            Session s = session();
            return s.getUserName() + "@" + s.getHost() + ":" + s.getPort();
        }

        private Session session() throws NodeException {
            try {
                return connections.session(target);
            } catch (SshException e) {
                throw new NodeException(e.getMessage(), e);
            }
        }

        @Override
        public NodeProcess start(List<String> argv, OutputStream stderr, int timeoutMs) throws NodeException {
            try {
                SshAgentChannel ch = SshAgentChannel.start(session(), argv, stderr, timeoutMs);
                return NodeProcess.of(ch.in(), ch.out(), ch::close);
            } catch (SshException e) {
                throw new NodeException(e.getMessage(), e);
            }
        }

        @Override
        public void reset() {
            connections.drop(target.node());
        }

        @Override
        public Optional<String> probe() {
            return connections.probe(target);
        }

        @Override
        public Optional<String> address() {
            return connections.existing(target.node()).map(Session::getHost);
        }
    }
}
