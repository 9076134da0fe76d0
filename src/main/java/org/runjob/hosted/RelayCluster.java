package org.runjob.hosted;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import org.runjob.node.Cluster;
import org.runjob.node.NodeAccess;
import org.runjob.node.NodeException;
import org.runjob.node.NodeProcess;
import org.runjob.protocol.HostRecords;
import org.runjob.protocol.HostedRun;
import org.runjob.protocol.SecureLink;
import org.runjob.spec.NodeSpec;

/**
 * How a submitted run's coordinator, on the master node, reaches the run's nodes: through the
 * node host ({@code agent.NodeHost}) that {@code runjob submit} left on each, one
 * {@link SecureLink} per program, keyed by that node's key ({@link SecureLink#nodeKey} of the run's secret). While the cluster is
 * open it holds every host ({@link HostRecords.Type#HOLD}), spares included; closing it ends every host.
 */
public final class RelayCluster implements Cluster {

    private static final int STOP_TIMEOUT_MS = 5_000;
    private static final int CHUNK = 256 << 10;

    private final HostedRun run;

    /** How often a hold says the coordinator is still there: well within the host's 20 s idle end. */
    static final long HOLD_EVERY_MS = 5_000;

    private final List<Thread> holds = new ArrayList<>();
    private volatile boolean closed;

    /** Reaches the run's node hosts, and holds each of them for as long as this cluster is open. */
    public RelayCluster(HostedRun run) {
        this.run = run;
        run.hosts().forEach((node, endpoint) -> {
            Thread t = new Thread(() -> hold(node, endpoint), "hold-" + node);
            t.setDaemon(true);
            t.start();
            holds.add(t);
        });
    }

    /**
     * Keeps one node's host up while this coordinator runs: a HOLD record every
     * {@value #HOLD_EVERY_MS} ms on one connection (again on a new one after a failure), so a spare
     * that runs nothing until a node is lost is still there when it is needed.
     */
    private void hold(String node, HostedRun.Endpoint endpoint) {
        while (!closed) {
            try (SecureLink link = connect(node, endpoint, STOP_TIMEOUT_MS)) {
                while (!closed) {
                    link.send(HostRecords.Type.HOLD, new byte[0]);
                    Thread.sleep(HOLD_EVERY_MS);
                }
            } catch (IOException e) {
                // the host is unreachable now (its node lost): tried again after the pause
            } catch (InterruptedException e) {
                return;
            }
            try {
                Thread.sleep(HOLD_EVERY_MS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    @Override
    public NodeAccess node(NodeSpec node) {
        HostedRun.Endpoint e = run.hosts().get(node.name());
        if (e == null) {
            throw new IllegalArgumentException("node " + node.name() + " has no node host");
        }
        return new RelayNode(node.name(), e);
    }

    @Override
    public void close() {
        closed = true;
        holds.forEach(Thread::interrupt);
        for (var e : run.hosts().entrySet()) {
            try (SecureLink link = connect(e.getKey(), e.getValue(), STOP_TIMEOUT_MS)) {
                link.send(HostRecords.Type.STOP, new byte[0]);
                link.receive();
            } catch (IOException ex) {
                // that host is gone already
            }
        }
    }

    private SecureLink connect(String node, HostedRun.Endpoint e, int timeoutMs) throws IOException {
        Socket s = new Socket();
        try {
            s.connect(new InetSocketAddress(e.address(), e.port()), timeoutMs);
            s.setTcpNoDelay(true);
            s.setSoTimeout(timeoutMs);
            SecureLink link = SecureLink.client(s.getInputStream(), s.getOutputStream(), s, SecureLink.nodeKey(run.secret(), node));
            s.setSoTimeout(0);
            return link;
        } catch (IOException ex) {
            s.close();
            throw ex;
        }
    }

    private final class RelayNode implements NodeAccess {
        private final String node;
        private final HostedRun.Endpoint endpoint;

        RelayNode(String node, HostedRun.Endpoint endpoint) {
            this.node = node;
            this.endpoint = endpoint;
        }

        @Override
        public String reach() throws NodeException {
            try (SecureLink ignored = connect(node, endpoint, 10_000)) {
                return "node host " + endpoint;
            } catch (IOException e) {
                throw new NodeException("cannot reach the run's node host at " + endpoint + ": " + e.getMessage(), e);
            }
        }

        @Override
        public Optional<String> probe() {
            try (SecureLink ignored = connect(node, endpoint, 10_000)) {
                return Optional.empty();
            } catch (IOException e) {
                return Optional.of("cannot reach the run's node host at " + endpoint + ": " + e.getMessage());
            }
        }

        @Override
        public NodeProcess start(List<String> argv, OutputStream stderr, int timeoutMs) throws NodeException {
            SecureLink link;
            try {
                link = connect(node, endpoint, timeoutMs);
                link.send(HostRecords.Type.EXEC, HostRecords.argv(argv));
                SecureLink.Record r = link.receive();
                if (r == null || !r.is(HostRecords.Type.STARTED)) {
                    link.close();
                    throw new NodeException("the node host at " + endpoint + " did not start " + argv.get(0)
                            + (r != null && r.is(HostRecords.Type.FAILED) ? ": " + r.text() : ""));
                }
            } catch (IOException e) {
                throw new NodeException("cannot start " + argv.get(0) + " through the node host at " + endpoint + ": " + e.getMessage(), e);
            }
            InputStream stdout = new RecordInput(link, stderr);
            OutputStream stdin = new BufferedOutputStream(new RecordOutput(link), CHUNK);
            return NodeProcess.of(stdout, stdin, link::close, () -> {
                try {
                    link.send(HostRecords.Type.KILL, new byte[0]);
                } catch (IOException e) {
                    // gone already
                }
                link.close();
            });
        }

        @Override
        public Optional<String> address() {
            return Optional.of(endpoint.address());
        }
    }

    /** The program's stdout: STDOUT records; STDERR records go to {@code stderr} on the way; EXIT ends it. */
    private static final class RecordInput extends InputStream {
        private final SecureLink link;
        private final OutputStream stderr;
        private byte[] buf = new byte[0];
        private int pos;
        private boolean ended;

        RecordInput(SecureLink link, OutputStream stderr) {
            this.link = link;
            this.stderr = stderr;
        }

        private boolean fill() throws IOException {
            while (pos >= buf.length && !ended) {
                SecureLink.Record r = link.receive();
                if (r == null || r.is(HostRecords.Type.EXIT)) {
                    ended = true;
                } else if (r.is(HostRecords.Type.STDOUT)) {
                    buf = r.payload();
                    pos = 0;
                } else if (r.is(HostRecords.Type.STDERR)) {
                    stderr.write(r.payload());
                    stderr.flush();
                }
            }
            return pos < buf.length;
        }

        @Override
        public int read() throws IOException {
            return fill() ? buf[pos++] & 0xff : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (!fill()) {
                return -1;
            }
            int n = Math.min(len, buf.length - pos);
            System.arraycopy(buf, pos, b, off, n);
            pos += n;
            return n;
        }

        @Override
        public void close() {
            link.close();
        }
    }

    /** The program's stdin: each flush is a STDIN record (or several), close is STDIN_EOF. */
    private static final class RecordOutput extends OutputStream {
        private final SecureLink link;
        private boolean closed;

        RecordOutput(SecureLink link) {
            this.link = link;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            for (int at = off; at < off + len; at += CHUNK) {
                link.send(HostRecords.Type.STDIN, Arrays.copyOfRange(b, at, Math.min(off + len, at + CHUNK)));
            }
        }

        @Override
        public synchronized void close() throws IOException {
            if (!closed) {
                closed = true;
                link.send(HostRecords.Type.STDIN_EOF, new byte[0]);
            }
        }
    }
}
