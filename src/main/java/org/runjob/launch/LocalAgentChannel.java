package org.runjob.launch;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.agent.NodeJvm;
import org.runjob.agent.ProcessTree;
import org.runjob.agent.Watchdog;

/**
 * A node agent run as a child process of runjob ({@code local: true} nodes): the same jar and the
 * same frames as a remote agent, over the child's stdin and stdout. The agent runs in a session of
 * its own, so a Ctrl-C on the terminal reaches only runjob, which then decides what stops.
 *
 * <p>If runjob dies, even by SIGKILL, the agent's stdin closes and it stops its workers. If the
 * agent dies instead, its {@link Watchdog} stops every process it had recorded, and
 * {@link #forceClose} those it had reported, by pid and group.
 */
final class LocalAgentChannel extends StreamAgentChannel {

    private static final Logger LOG = LogManager.getLogger(LocalAgentChannel.class);
    private static final Path SETSID = Path.of("/usr/bin/setsid");

    private final Process process;
    private final FramePump pump;

    private LocalAgentChannel(String node, Process process, FramePump pump) {
        super(node, process.getOutputStream());
        this.process = process;
        this.pump = pump;
    }

    /**
     * Starts {@code java -cp CLASSPATH org.runjob.cli.Main agent OPTIONS} under its watchdog and
     * begins reading its frames into {@code pump}.
     */
    static LocalAgentChannel start(String node, FramePump pump, Map<String, String> env, NodeJvm.Jit jit, List<String> agentArgs) throws IOException {
        List<String> cmd = new ArrayList<>();
        if (Files.isExecutable(SETSID)) {
            cmd.add(SETSID.toString());
        }
        cmd.addAll(List.of("sh", "-c", Watchdog.SCRIPT, "sh"));
        List<String> args = new ArrayList<>(List.of("agent"));
        args.addAll(agentArgs);
        cmd.addAll(NodeJvm.local(jit, args.toArray(String[]::new)));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().clear();
        pb.environment().putAll(env);
        // as for remote agents: argv and env reach workers in the locale's charset, so make it UTF-8
        String locale = env.getOrDefault("LC_ALL", env.getOrDefault("LC_CTYPE", env.getOrDefault("LANG", "")));
        if (!locale.toLowerCase(java.util.Locale.ROOT).replace("-", "").contains("utf8")) {
            pb.environment().put("LC_CTYPE", "C.UTF-8");
        }
        Process p = pb.start();
        LocalAgentChannel channel = new LocalAgentChannel(node, p, pump);
        pump.start(p.getInputStream());
        Thread err = new Thread(() -> channel.logStderr(p.getErrorStream()), "agent-err-" + node);
        err.setDaemon(true);
        err.start();
        LOG.debug("node {}: local agent pid {}", node, p.pid());
        return channel;
    }

    private void logStderr(InputStream err) {
        try (err) {
            for (String line : new String(err.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (!line.isBlank()) {
                    LOG.warn("node {} agent: {}", node(), line);
                }
            }
        } catch (IOException e) {
            // nothing more to log
        }
    }

    @Override
    public void forceClose() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        pump.workerTokens().forEach((pid, token) -> new ProcessTree(pid, token).kill());
    }

    @Override
    public void close() {
        closeStdin();
    }
}
