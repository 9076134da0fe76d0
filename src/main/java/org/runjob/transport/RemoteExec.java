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

    /** Ends channels whose command outlived its deadline. */
    private static final java.util.concurrent.ScheduledExecutorService DEADLINES =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "remote-exec-deadline");
                t.setDaemon(true);
                return t;
            });

    /**
     * Runs argv and waits for its end, at most {@code timeoutMs} from the start: a command still
     * running then (a {@code df} on a stale NFS mount, say) has its channel closed and is reported as
     * having given no answer within the deadline.
     */
    public static Result run(Session session, List<String> argv, int timeoutMs) throws SshException {
        ChannelExec ch = null;
        java.util.concurrent.atomic.AtomicBoolean late = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.ScheduledFuture<?> deadline = null;
        try {
            ch = (ChannelExec) session.openChannel("exec");
            ch.setCommand(ShellWords.join(argv));
            ch.setInputStream(null);
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            ch.setErrStream(err, true);
            InputStream out = ch.getInputStream();
            ChannelExec channel = ch;
            deadline = DEADLINES.schedule(() -> {
                late.set(true);
                channel.disconnect();
            }, timeoutMs, java.util.concurrent.TimeUnit.MILLISECONDS);
            ch.connect(timeoutMs);
            byte[] stdout;
            try {
                stdout = out.readAllBytes();
            } catch (IOException e) {
                if (late.get()) {
                    throw lateError(argv, timeoutMs);
                }
                throw e;
            }
            while (!ch.isClosed() && !late.get()) {
                Thread.sleep(5);
            }
            if (late.get()) {
                throw lateError(argv, timeoutMs);
            }
            return new Result(ch.getExitStatus(), new String(stdout, StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } catch (JSchException | IOException e) {
            if (late.get()) {
                throw lateError(argv, timeoutMs);
            }
            throw new SshException("cannot run " + argv.get(0) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SshException("interrupted running " + argv.get(0), e);
        } finally {
            if (deadline != null) {
                deadline.cancel(false);
            }
            if (ch != null) {
                ch.disconnect();
            }
        }
    }

    private static SshException lateError(List<String> argv, int timeoutMs) {
        return new SshException(argv.get(0) + " gave no answer within " + (timeoutMs + 999) / 1000
                + " s (a hung file system on the node?); its channel was closed");
    }
}
