package org.runjob.session;

import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;

import org.runjob.node.NodeAccess;
import org.runjob.node.NodeException;
import org.runjob.node.NodeProcess;
import org.runjob.protocol.NodeJvm;

/**
 * A command run on a node the way its agent is started: the {@link Bootstrap} (the node's java, or a
 * runtime sent to it; a jar cached by content), then {@code agent --jar SHA --then COMMAND...}
 * instead of an agent. {@link #runjob} runs a runjob command from runjob's whole jar: {@code runjob
 * submit} starts the run's coordinator with it, and {@code status}, {@code logs} and {@code stop}
 * reach a submitted run with it. {@link #agentSide} runs a command of the agent artifact (a node
 * host), so a node that only hosts agents only ever receives that jar.
 * After the bootstrap, the command's stdin, stdout and stderr are its own; what the login shell
 * printed on stderr before is dropped.
 */
public final class NodeCommand {

    private NodeCommand() {
    }

    /** Starts runjob {@code command} on the node; the bootstrap (and a jar or runtime it asks for) is done when this returns. */
    public static NodeProcess runjob(String node, NodeAccess access, List<String> command, OutputStream stderr,
                                     Map<String, String> env) throws IOException {
        return start(node, access, PinnedJar.runjob(), command, stderr, env);
    }

    /** The same for a command of the agent artifact ({@code agent.AgentMain}). */
    public static NodeProcess agentSide(String node, NodeAccess access, List<String> command, OutputStream stderr,
                                        Map<String, String> env) throws IOException {
        return start(node, access, PinnedJar.agent(), command, stderr, env);
    }

    private static NodeProcess start(String node, NodeAccess access, PinnedJar jar, List<String> command, OutputStream stderr,
                                     Map<String, String> env) throws IOException {
        List<String> args = new ArrayList<>(List.of(NodeJvm.THEN));
        args.addAll(command);
        NodeProcess ch;
        Gate gate = new Gate(stderr);
        try {
            ch = access.start(Bootstrap.argv(jar, NodeJvm.Jit.QUICK, args), gate, NodeStarter.REMOTE_START_MS);
        } catch (NodeException e) {
            throw new IOException(e.getMessage(), e);
        }
        ScheduledFuture<?> deadline = Deadlines.after(NodeStarter.REMOTE_START_MS, ch::kill);
        try {
            Bootstrap.converse(node, ch.stdout(), ch.stdin(), jar.path(), (arch, libc) -> NodeRuntime.forNode(node, arch, libc, env, jar.runtimeModules()));
        } catch (IOException e) {
            ch.kill();
            throw e;
        } finally {
            deadline.cancel(false);
        }
        gate.open();
        return ch;
    }

    /** The node's stderr: what the login shell and the bootstrap print before the command starts is dropped (an rc file's noise). */
    private static final class Gate extends OutputStream {
        private final OutputStream to;
        private volatile boolean open;

        Gate(OutputStream to) {
            this.to = to;
        }

        void open() {
            open = true;
        }

        @Override
        public void write(int b) throws IOException {
            if (open) {
                to.write(b);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (open) {
                to.write(b, off, len);
            }
        }

        @Override
        public void flush() throws IOException {
            to.flush();
        }
    }
}
