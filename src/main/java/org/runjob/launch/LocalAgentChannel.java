package org.runjob.launch;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.agent.Exit;
import org.runjob.agent.Frame;
import org.runjob.agent.ProcessTree;

/**
 * A node agent run as a child process of runjob ({@code local: true} nodes): the same jar and the
 * same frames as a remote agent, over the child's stdin and stdout. The agent runs in a session of
 * its own, so a Ctrl-C on the terminal reaches only runjob, which then decides what stops.
 *
 * <p>If runjob dies, even by SIGKILL, the agent's stdin closes and it stops its workers. If the
 * agent dies instead, {@link #forceClose} stops the workers it had reported, by pid and group.
 */
final class LocalAgentChannel implements AgentChannel {

    private static final Logger LOG = LogManager.getLogger(LocalAgentChannel.class);
    private static final Path SETSID = Path.of("/usr/bin/setsid");

    private final String node;
    private final Process process;
    private final DataOutputStream out;
    private final Map<Long, String> workerTokens = new ConcurrentHashMap<>();

    private LocalAgentChannel(String node, Process process) {
        this.node = node;
        this.process = process;
        this.out = new DataOutputStream(new BufferedOutputStream(process.getOutputStream(), 65536));
    }

    /** Starts {@code java -cp CLASSPATH org.runjob.cli.Main agent} and begins reading its frames into {@code events}. */
    static LocalAgentChannel start(String node, BlockingQueue<Event> events, Map<String, String> env) throws IOException {
        List<String> cmd = new ArrayList<>();
        if (Files.isExecutable(SETSID)) {
            cmd.add(SETSID.toString());
        }
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-Xshare:auto");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add("org.runjob.cli.Main");
        cmd.add("agent");
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = pb.start();
        LocalAgentChannel channel = new LocalAgentChannel(node, p);
        Thread reader = new Thread(() -> channel.readLoop(events), "agent-" + node);
        reader.setDaemon(true);
        reader.start();
        Thread err = new Thread(() -> channel.logStderr(p.getErrorStream()), "agent-err-" + node);
        err.setDaemon(true);
        err.start();
        LOG.debug("node {}: local agent pid {}", node, p.pid());
        return channel;
    }

    @Override
    public String node() {
        return node;
    }

    @Override
    public synchronized void send(Frame frame) throws IOException {
        frame.writeTo(out);
        out.flush();
    }

    private void readLoop(BlockingQueue<Event> events) {
        boolean done = false;
        String reason = "its agent exited";
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(process.getInputStream(), 65536))) {
            Frame f;
            while ((f = Frame.readFrom(in)) != null) {
                switch (f.type()) {
                    case STARTED -> {
                        long pid = ByteBuffer.wrap(f.payload()).getLong();
                        workerTokens.put(pid, new String(f.payload(), 8, f.payload().length - 8, StandardCharsets.UTF_8));
                        events.add(new Event.Started(node, f.rank(), pid));
                    }
                    case STDOUT -> events.add(new Event.Output(node, f.rank(), false, f.payload()));
                    case STDERR -> events.add(new Event.Output(node, f.rank(), true, f.payload()));
                    case EXITED -> events.add(new Event.Exited(node, f.rank(), Exit.decode(f.payload())));
                    case DONE -> done = true;
                    default -> { }
                }
            }
        } catch (IOException e) {
            reason = "its agent's channel broke: " + e.getMessage();
        }
        if (done) {
            events.add(new Event.AgentDone(node));
        } else {
            events.add(new Event.AgentLost(node, reason));
        }
    }

    private void logStderr(InputStream err) {
        try (err) {
            for (String line : new String(err.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (!line.isBlank()) {
                    LOG.warn("node {} agent: {}", node, line);
                }
            }
        } catch (IOException e) {
            // nothing more to log
        }
    }

    @Override
    public void forceClose() {
        process.destroyForcibly();
        workerTokens.forEach((pid, token) -> new ProcessTree(pid, token).kill());
    }

    @Override
    public void close() {
        try {
            out.close();
        } catch (IOException e) {
            // already closed
        }
    }
}
