package org.runjob.agent;

import java.util.Arrays;
import java.util.List;

import org.runjob.protocol.NodeJvm;

/**
 * The entry point of runjob's node side, and the main class of the agent artifact (the jar nodes
 * receive: this package, {@code protocol}, {@code json} and the libraries they use; no SSH, YAML,
 * schema, CLI or logging framework). Its first argument says what to run:
 * <ul>
 *   <li>{@code agent OPTIONS}: a node agent ({@link Agent}), speaking frames on stdin and stdout;</li>
 *   <li>{@code probe gpus}: the agent's GPU probe child ({@link Probe});</li>
 *   <li>{@code host-start RUN} and {@code host RUN}: a submitted run's node host ({@link NodeHost}).</li>
 * </ul>
 * The bootstrap starts every one of them as {@code agent --jar SHA ...}; {@code agent --jar SHA
 * --then COMMAND...} runs COMMAND instead of an agent. runjob's own main class hands these
 * commands here too, so the whole runjob jar can run them.
 */
public final class AgentMain {

    /** Exit code of a command line this class does not know. */
    static final int USAGE = 2;

    private AgentMain() {
    }

    public static void main(String[] args) {
        System.exit(run(NodeJvm.afterThen(args)));
    }

    /** Runs one of {@link NodeJvm#COMMANDS} on this process's stdin and stdout; returns its exit code. */
    public static int run(String[] args) {
        List<String> rest = Arrays.asList(args).subList(Math.min(1, args.length), args.length);
        String command = args.length == 0 ? "" : args[0];
        switch (command) {
            case NodeJvm.AGENT:
                return Agent.main(rest, System.in, System.out, System.getenv());
            case NodeJvm.PROBE:
                return Probe.main(rest.toArray(String[]::new), System.in, System.out);
            case NodeJvm.HOST_START:
                return NodeHost.start(rest, System.in, System.out);
            case NodeJvm.HOST:
                return NodeHost.main(rest, System.in, System.out);
            default:
                System.err.println("runjob's agent: unknown command '" + command + "': " + NodeJvm.AGENT + ", " + NodeJvm.PROBE + ", "
                        + NodeJvm.HOST_START + " or " + NodeJvm.HOST);
                return USAGE;
        }
    }
}
