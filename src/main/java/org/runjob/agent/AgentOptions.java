package org.runjob.agent;

import java.util.List;
import java.util.Optional;

/**
 * The agent's command line: {@code agent [--workdir DIR] [--program NAME] [--run ID --job NAME]}.
 * With a workdir the agent checks its node and reports the facts in HELLO; with a run id it also
 * holds the workdir's run lock for its lifetime. Without options it only runs workers.
 */
public record AgentOptions(Optional<String> workdir, Optional<String> program, Optional<String> runId, Optional<String> job) {

    public static final AgentOptions NONE = new AgentOptions(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());

    /** @throws IllegalArgumentException for an unknown option or a missing value */
    public static AgentOptions parse(List<String> args) {
        String workdir = null;
        String program = null;
        String run = null;
        String job = null;
        for (int i = 0; i < args.size(); i += 2) {
            if (i + 1 >= args.size()) {
                throw new IllegalArgumentException("agent option " + args.get(i) + " needs a value");
            }
            String v = args.get(i + 1);
            switch (args.get(i)) {
                case "--workdir" -> workdir = v;
                case "--program" -> program = v;
                case "--run" -> run = v;
                case "--job" -> job = v;
                default -> throw new IllegalArgumentException("unknown agent option " + args.get(i));
            }
        }
        return new AgentOptions(Optional.ofNullable(workdir), Optional.ofNullable(program), Optional.ofNullable(run),
                Optional.ofNullable(job));
    }

    /** The options as arguments after {@code agent}. */
    public List<String> args() {
        List<String> out = new java.util.ArrayList<>();
        workdir.ifPresent(w -> out.addAll(List.of("--workdir", w)));
        program.ifPresent(p -> out.addAll(List.of("--program", p)));
        runId.ifPresent(r -> out.addAll(List.of("--run", r)));
        job.ifPresent(j -> out.addAll(List.of("--job", j)));
        return out;
    }
}
