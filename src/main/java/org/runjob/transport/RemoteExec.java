package org.runjob.transport;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import com.jcraft.jsch.ChannelExec;
import com.jcraft.jsch.JSchException;
import com.jcraft.jsch.Session;

import org.runjob.plan.ShellWords;

/**
 * One command on a node over an exec channel of an open session. The command is an argv list,
 * quoted once here by {@link ShellWords}: user values are never pasted into shell text.
 */
public final class RemoteExec {

    /** What a command printed and how it exited. */
    public record Result(int exitCode, String stdout, String stderr) {
    }

    private RemoteExec() {
    }

    public static Result run(Session session, List<String> argv, int timeoutMs) throws SshException {
        ChannelExec ch = null;
        try {
            ch = (ChannelExec) session.openChannel("exec");
            ch.setCommand(ShellWords.join(argv));
            ch.setInputStream(null);
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            ch.setErrStream(err, true);
            InputStream out = ch.getInputStream();
            ch.connect(timeoutMs);
            byte[] stdout = out.readAllBytes();
            long deadline = System.currentTimeMillis() + timeoutMs;
            while (!ch.isClosed() && System.currentTimeMillis() < deadline) {
                Thread.sleep(5);
            }
            return new Result(ch.getExitStatus(), new String(stdout, StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } catch (JSchException | IOException e) {
            throw new SshException("cannot run " + argv.get(0) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SshException("interrupted running " + argv.get(0), e);
        } finally {
            if (ch != null) {
                ch.disconnect();
            }
        }
    }
}
