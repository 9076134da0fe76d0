package org.runjob.session;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.agent.ProcessTree;
import org.runjob.node.NodeAccess;
import org.runjob.node.NodeException;
import org.runjob.node.NodeProcess;
import org.runjob.protocol.NodeJvm;

/**
 * A node's agent, started by the {@link Bootstrap} as one program on the node (a local child
 * process, an SSH exec channel of the node's session, a Slurm step): its stdin and stdout first
 * carry the bootstrap's lines (and the agent jar when the node's cache lacks it), then the agent's
 * frames. If the link drops, the session's keepalive ends the channel here (the node is lost) and
 * the agent there sees its stdin close, or misses the coordinator's heartbeats, and stops its
 * workers. If runjob dies, even by SIGKILL, the agent's stdin closes and it stops its workers; if
 * the agent dies instead, its {@link org.runjob.agent.Watchdog} stops every process it recorded.
 */
final class NodeAgentChannel extends StreamAgentChannel {

    private static final Logger LOG = LogManager.getLogger(NodeAgentChannel.class);

    private final NodeProcess channel;

    private final FramePump pump;
    /** True when the node's processes are this machine's: the worker trees the agent reported can be killed from here. */
    private final boolean onThisMachine;

    /** How long a failed start waits for the channel's stderr to say why. */
    private static final long STDERR_WAIT_MS = 2000;

    private NodeAgentChannel(String node, NodeProcess channel, FramePump pump, boolean onThisMachine) {
        super(node, channel.stdin());
        this.channel = channel;
        this.pump = pump;
        this.onThisMachine = onThisMachine;
    }

    /**
     * Runs the bootstrap on the node, sends the jar if asked, and starts reading frames into
     * {@code pump}; the whole start must end within {@code timeoutMs}.
     */
    static NodeAgentChannel start(String node, NodeAccess access, PinnedJar jar, NodeJvm.Jit jit, List<String> agentArgs, FramePump pump, int timeoutMs,
                                    Map<String, String> env) throws IOException {
        NodeProcess ch;
        StderrLog stderr = new StderrLog(node);
        try {
            ch = access.start(Bootstrap.argv(jar, jit, agentArgs), stderr.out, timeoutMs);
        } catch (NodeException e) {
            throw new IOException(e.getMessage(), e);
        }
        ScheduledFuture<?> deadline = Deadlines.after(timeoutMs, ch::kill);
        try {
            boolean sent = Bootstrap.converse(node, ch.stdout(), ch.stdin(), jar.path(), (arch, libc) -> NodeRuntime.forNode(node, arch, libc, env, jar.runtimeModules()));
            stderr.started();
            LOG.debug("node {}: bootstrap done{}", node, sent ? ", agent jar sent" : ", agent jar cached");
        } catch (IOException e) {
            if (deadline.isDone() && !(e instanceof Bootstrap.Failure)) {
                ch.kill();
                throw new IOException("the node's agent did not start within " + timeoutMs / 1000 + " s", e);
            }
            if (!(e instanceof Bootstrap.Failure)) {
                // what ended the channel is most often said on its stderr (srun refusing the step, a shell's error),
                // read before the channel is killed: srun may end its stdout before it prints why
                Optional<String> said = stderr.last(STDERR_WAIT_MS);
                ch.kill();
                if (said.isPresent()) {
                    throw new IOException(e.getMessage() + "; its stderr said: " + said.get());
                }
            }
            ch.kill();
            throw e;
        } finally {
            deadline.cancel(false);
        }
        NodeAgentChannel channel = new NodeAgentChannel(node, ch, pump, access.onThisMachine());
        pump.start(ch.stdout());
        return channel;
    }

    /**
     * Ends the channel now. On this machine it also kills every worker tree the agent reported
     * (pid and token: {@link ProcessTree}), for workers an agent that died left behind.
     */
    @Override
    public void forceClose() {
        channel.kill();
        if (onThisMachine) {
            pump.workerTokens().forEach((pid, token) -> new ProcessTree(pid, token).kill());
        }
    }

    @Override
    public boolean silentFor(long nanos) {
        return pump.silentFor(nanos);
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
    private static final class StderrLog {
        private final String node;
        private volatile boolean started;
        /** The last {@value #KEPT} non-blank lines before the agent started, oldest first. */
        private final Deque<String> last = new ArrayDeque<>();
        private static final int KEPT = 2;
        final LineOutput out = new LineOutput(this::line);

        StderrLog(String node) {
            this.node = node;
        }

        void started() {
            started = true;
        }

        /**
         * The last lines before the agent started, joined by "; ": waited for until the stderr copy
         * ended (closed) or {@value #KEPT} lines came, up to {@code waitMs} (the copy may lag the channel's end).
         */
        Optional<String> last(long waitMs) {
            long deadline = System.nanoTime() + waitMs * 1_000_000;
            while (!out.closed() && size() < KEPT && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            synchronized (last) {
                return last.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", last));
            }
        }

        private int size() {
            synchronized (last) {
                return last.size();
            }
        }

        private void line(String text) {
            if (!started && !text.isBlank()) {
                synchronized (last) {
                    last.addLast(text.strip());
                    if (last.size() > KEPT) {
                        last.removeFirst();
                    }
                }
            }
            if (started) {
                LOG.warn("node {} agent: {}", node, text);
            } else {
                LOG.info("node {}: the login shell or bootstrap printed on stderr: {}", node, text);
            }
        }
    }
}
