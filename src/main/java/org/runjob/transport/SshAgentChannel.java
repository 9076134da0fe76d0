package org.runjob.transport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;

import com.jcraft.jsch.ChannelExec;
import com.jcraft.jsch.JSchException;
import com.jcraft.jsch.Session;
import org.runjob.plan.ShellWords;

/**
 * A node agent started over an exec channel (the bootstrap, then {@code java -cp CACHED_JAR
 * org.runjob.cli.Main agent}), speaking frames on the channel's stdin and stdout. The agent's
 * stderr goes to {@code stderrSink}. Closing the channel, or losing the link, closes the agent's
 * stdin, and the agent then stops its workers by itself.
 */
public final class SshAgentChannel implements AutoCloseable {

    private final Session session;
    private final ChannelExec channel;
    private final InputStream in;
    private final OutputStream out;

    private SshAgentChannel(Session session, ChannelExec channel, InputStream in, OutputStream out) {
        this.session = session;
        this.channel = channel;
        this.in = in;
        this.out = out;
    }

    public static SshAgentChannel start(Session session, List<String> argv, OutputStream stderrSink, int timeoutMs)
            throws SshException {
        try {
            ChannelExec ch = (ChannelExec) session.openChannel("exec");
            ch.setCommand(ShellWords.join(argv));
            ch.setErrStream(stderrSink, true);
            ChunkPipe pipe = new ChunkPipe();
            ch.setOutputStream(pipe.sink, false); // closed by JSch when the channel ends: the reader sees EOF
            InputStream in = pipe.source;
            OutputStream out = ch.getOutputStream();
            ch.connect(timeoutMs);
            return new SshAgentChannel(session, ch, in, out);
        } catch (JSchException | IOException e) {
            throw new SshException("cannot start the agent: " + e.getMessage(), e);
        }
    }

    public InputStream in() {
        return in;
    }

    public OutputStream out() {
        return out;
    }

    /** Ends the channel (the agent sees its stdin close); the session stays for others to use. */
    @Override
    public void close() {
        channel.disconnect();
    }
}
