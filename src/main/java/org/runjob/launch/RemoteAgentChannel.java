package org.runjob.launch;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.agent.NodeJvm;
import org.runjob.node.NodeAccess;
import org.runjob.node.NodeException;
import org.runjob.node.NodeProcess;

/**
 * A node agent on a remote node, started by the {@link Bootstrap} as one program on the node (an
 * SSH exec channel of the node's session, a Slurm step): its stdin and stdout first carry the bootstrap's lines (and the agent jar when the
 * node lacks it), then the agent's frames, the same as a local agent's. If the link drops, the
 * session's keepalive ends the channel here (the node is lost) and the agent there sees its stdin
 * close, or misses the coordinator's heartbeats, and stops its workers.
 */
final class RemoteAgentChannel extends StreamAgentChannel {

    private static final Logger LOG = LogManager.getLogger(RemoteAgentChannel.class);

    private final NodeProcess channel;

    private RemoteAgentChannel(String node, NodeProcess channel) {
        super(node, channel.stdin());
        this.channel = channel;
    }

    /**
     * Runs the bootstrap on the node, sends the jar if asked, and starts reading frames into
     * {@code pump}; the whole start must end within {@code timeoutMs}.
     */
    static RemoteAgentChannel start(String node, NodeAccess access, AgentJar jar, NodeJvm.Jit jit, List<String> agentArgs, FramePump pump, int timeoutMs,
                                    java.util.Map<String, String> env) throws IOException {
        NodeProcess ch;
        StderrLog stderr = new StderrLog(node);
        try {
            ch = access.start(Bootstrap.argv(jar.sha256(), jar.size(), jit, agentArgs), stderr, timeoutMs);
        } catch (NodeException e) {
            throw new IOException(e.getMessage(), e);
        }
        java.util.concurrent.ScheduledFuture<?> deadline = Deadlines.after(timeoutMs, ch::close);
        try {
            boolean sent = Bootstrap.converse(node, ch.stdout(), ch.stdin(), jar.path(), (arch, libc) -> NodeRuntime.forNode(node, arch, libc, env));
            stderr.started();
            LOG.debug("node {}: bootstrap done{}", node, sent ? ", agent jar sent" : ", agent jar cached");
        } catch (IOException e) {
            ch.close();
            if (deadline.isDone() && !(e instanceof Bootstrap.Failure)) {
                throw new IOException("the node's agent did not start within " + timeoutMs / 1000 + " s", e);
            }
            throw e;
        } finally {
            deadline.cancel(false);
        }
        RemoteAgentChannel channel = new RemoteAgentChannel(node, ch);
        pump.start(ch.stdout());
        return channel;
    }

    @Override
    public void forceClose() {
        channel.close();
    }

    @Override
    public void close() {
        closeStdin();
        channel.close();
    }

    /**
     * The remote side's stderr, line by line, into runjob.log: before the agent started it is the
     * login shell's and the bootstrap's (an rc file's noise, say: logged, not shown), after that the
     * agent's (a warning, shown).
     */
    private static final class StderrLog extends OutputStream {
        private final String node;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();
        private volatile boolean started;

        StderrLog(String node) {
            this.node = node;
        }

        void started() {
            started = true;
        }

        @Override
        public synchronized void write(int b) {
            if (b == '\n') {
                String text = line.toString(StandardCharsets.UTF_8);
                if (started) {
                    LOG.warn("node {} agent: {}", node, text);
                } else {
                    LOG.info("node {}: the login shell or bootstrap printed on stderr: {}", node, text);
                }
                line.reset();
            } else if (line.size() < 8192) {
                line.write(b);
            }
        }
    }
}
