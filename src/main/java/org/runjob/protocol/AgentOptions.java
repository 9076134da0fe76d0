package org.runjob.protocol;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The agent's command line:
 * {@code agent [--jar SHA256] [--workdir DIR] [--run ID --job NAME] [--run-dir DIR] [--report NAME]...}.
 * With a workdir the agent checks its node and reports the facts in HELLO; with a run id it also
 * holds the workdir's run lock for its lifetime. Without options it only runs workers.
 * {@code --jar} is the SHA-256 the bootstrap verified the agent's jar by; HELLO reports it.
 * {@code --run-dir} is the run's own directory under the workdir, where its files land and its
 * workers start; without it the run works in the workdir itself and holds its run lock.
 * {@code --report NAME} (repeated) asks the agent to report its CUDA_VISIBLE_DEVICES and variable
 * NAME of its environment in HELLO: what a backend whose scheduler gives GPUs reads them from.
 */
public record AgentOptions(Optional<String> workdir, Optional<String> runId, Optional<String> job,
                           Optional<String> jar, Optional<String> runDir, List<String> report) {

    public static final AgentOptions NONE = new AgentOptions(Optional.empty(), Optional.empty(), Optional.empty(),
            Optional.empty(), Optional.empty());

    /** A variable name the agent reports: what a shell could name. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    public AgentOptions {
        report = List.copyOf(report);
        for (String name : report) {
            if (!NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("agent option --report needs a variable name, not " + name);
            }
        }
    }

    public AgentOptions(Optional<String> workdir, Optional<String> runId, Optional<String> job, Optional<String> jar, Optional<String> runDir) {
        this(workdir, runId, job, jar, runDir, List.of());
    }

    public AgentOptions(Optional<String> workdir, Optional<String> runId, Optional<String> job) {
        this(workdir, runId, job, Optional.empty(), Optional.empty());
    }


    /** @throws IllegalArgumentException for an unknown option or a missing value */
    public static AgentOptions parse(List<String> args) {
        String workdir = null;
        String run = null;
        String job = null;
        String jar = null;
        String runDir = null;
        List<String> report = new ArrayList<>();
        for (int i = 0; i < args.size(); i += 2) {
            if (i + 1 >= args.size()) {
                throw new IllegalArgumentException("agent option " + args.get(i) + " needs a value");
            }
            String v = args.get(i + 1);
            switch (args.get(i)) {
                case "--workdir" -> workdir = v;
                case "--run" -> run = v;
                case "--job" -> job = v;
                case "--jar" -> jar = v;
                case "--run-dir" -> runDir = v;
                case "--report" -> report.add(v);
                default -> throw new IllegalArgumentException("unknown agent option " + args.get(i));
            }
        }
        return new AgentOptions(Optional.ofNullable(workdir), Optional.ofNullable(run),
                Optional.ofNullable(job), Optional.ofNullable(jar), Optional.ofNullable(runDir), report);
    }

    /** The options as arguments after {@code agent}. */
    public List<String> args() {
        List<String> out = new ArrayList<>();
        workdir.ifPresent(w -> out.addAll(List.of("--workdir", w)));
        runId.ifPresent(r -> out.addAll(List.of("--run", r)));
        job.ifPresent(j -> out.addAll(List.of("--job", j)));
        jar.ifPresent(j -> out.addAll(List.of("--jar", j)));
        runDir.ifPresent(d -> out.addAll(List.of("--run-dir", d)));
        report.forEach(r -> out.addAll(List.of("--report", r)));
        return out;
    }
}
