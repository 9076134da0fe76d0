package org.runjob.launch;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.BlockingQueue;

import com.jcraft.jsch.Session;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.agent.NodeJvm;
import org.runjob.agent.Watchdog;
import org.runjob.distribute.RemotePaths;
import org.runjob.plan.NodePlan;
import org.runjob.transport.SshAgentChannel;
import org.runjob.transport.SshException;

/**
 * A node agent on a remote node: {@code java -cp WORKDIR/.runjob/runjob.jar org.runjob.cli.Main
 * agent} under its {@link Watchdog} over an SSH exec channel of the node's session, speaking the
 * same frames as a local agent.
 * If the link drops, the session's keepalive ends the channel here (the node is lost) and the agent
 * there sees its stdin close, or misses the coordinator's heartbeats, and stops its workers.
 */
final class RemoteAgentChannel extends StreamAgentChannel {

    private static final Logger LOG = LogManager.getLogger(RemoteAgentChannel.class);

    /**
     * Java encodes a child's argv and environment in the locale's charset; an SSH session often has
     * no locale (POSIX: ASCII), which would turn "训练" into "??". Unless the session's locale is
     * already UTF-8, the agent (and so its workers) runs with LC_CTYPE=C.UTF-8. A constant script:
     * the command it runs comes as its arguments.
     */
    static final String UTF8_LOCALE = "case \"${LC_ALL:-${LC_CTYPE:-$LANG}}\" in *[Uu][Tt][Ff]-8*|*[Uu][Tt][Ff]8*) ;; "
            + "*) LC_CTYPE=C.UTF-8; export LC_CTYPE ;; esac; exec \"$@\"";

    private final SshAgentChannel channel;

    private RemoteAgentChannel(String node, SshAgentChannel channel) {
        super(node, channel.out());
        this.channel = channel;
    }

    static RemoteAgentChannel start(NodePlan node, Session session, BlockingQueue<Event> events) throws IOException {
        List<String> argv = new java.util.ArrayList<>(List.of("sh", "-c", UTF8_LOCALE, "sh", "sh", "-c", Watchdog.SCRIPT, "sh"));
        argv.addAll(NodeJvm.argv("java", RemotePaths.agentJar(node.workdir()), "agent"));
        SshAgentChannel ch;
        try {
            ch = SshAgentChannel.start(session, argv, new StderrLog(node.name()), 30_000);
        } catch (SshException e) {
            throw new IOException(e.getMessage(), e);
        }
        RemoteAgentChannel channel = new RemoteAgentChannel(node.name(), ch);
        new FramePump(node.name()).start(ch.in(), events);
        LOG.debug("node {}: remote agent started", node.name());
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

    /** The remote agent's stderr, line by line, into runjob.log. */
    private static final class StderrLog extends OutputStream {
        private final String node;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();

        StderrLog(String node) {
            this.node = node;
        }

        @Override
        public synchronized void write(int b) {
            if (b == '\n') {
                LOG.warn("node {} agent: {}", node, line.toString(StandardCharsets.UTF_8));
                line.reset();
            } else if (line.size() < 8192) {
                line.write(b);
            }
        }
    }
}
