package org.runjob.spec;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** What every worker runs: an argv list, or a shipped jar's main class. */
public sealed interface EntrypointSpec {

    /** Whether {@code --local_rank=N} is appended (the old torch.distributed.launch contract). */
    boolean localRankArg();

    /** The same entrypoint with {@code more} arguments after its own ({@code runjob FILE -- ARGS}). */
    default EntrypointSpec withArgs(List<String> more) {
        if (more.isEmpty()) {
            return this;
        }
        if (this instanceof Command c) {
            List<String> argv = new ArrayList<>(c.argv());
            argv.addAll(more);
            return new Command(argv, c.localRankArg());
        }
        Jar j = (Jar) this;
        List<String> args = new ArrayList<>(j.args());
        args.addAll(more);
        return new Jar(j.jarInWorkdir(), j.main(), args, j.jvmArgs(), j.localRankArg());
    }

    /** {@code command: [python3, train.py]}: run as given, never through a shell. */
    record Command(List<String> argv, boolean localRankArg) implements EntrypointSpec {
        public Command {
            argv = List.copyOf(argv);
            if (argv.isEmpty() || argv.get(0).isEmpty()) {
                throw new IllegalArgumentException("a command names its program first");
            }
        }
    }

    /**
     * {@code jar: build/train.jar, main: org.example.Train}: runs
     * {@code java JVM_ARGS... -cp JAR_IN_WORKDIR MAIN ARGS...}; the jar is shipped like a file.
     */
    record Jar(String jarInWorkdir, String main, List<String> args, List<String> jvmArgs, boolean localRankArg)
            implements EntrypointSpec {
        public Jar {
            Objects.requireNonNull(jarInWorkdir, "jarInWorkdir");
            Objects.requireNonNull(main, "main");
            args = List.copyOf(args);
            jvmArgs = List.copyOf(jvmArgs);
        }
    }
}
