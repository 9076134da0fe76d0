package org.runjob.spec;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

import org.runjob.runtime.WorkerRuntimes;

/**
 * The software environment a node's workers run in ({@code environment:}, the job's merged key by
 * key with the node's), as written: a pass-through record the planner copies unchanged and the
 * node's agent carries out.
 *
 * <p>On the node, in this order: each of {@code modules} is loaded ({@code module load}), each of
 * {@code sources} is sourced, then the interpreter is put first on PATH (a venv's {@code bin}, a
 * conda environment activated by its own {@code conda}, or a Python's directory); then the
 * {@code setup} commands run once per node per content; the workers start in that environment,
 * inside {@code container} when there is one. None of it reads the login shell's rc files.
 *
 * @param interpreter   the venv, conda environment or Python the workers' {@code python} is
 * @param setupTimeoutSeconds how long all setup commands of one node may take together
 * @param skewIsError   a torch, CUDA or NCCL version that differs between nodes fails preflight ({@code on_skew: error}); else a warning
 */
public record EnvironmentSpec(Optional<Interpreter> interpreter, List<String> modules, List<String> sources, List<String> setup,
                              int setupTimeoutSeconds, Optional<ContainerSpec> container, boolean skewIsError) {

    public static final int DEFAULT_SETUP_TIMEOUT_S = 600;

    /** No environment: workers run with the agent's own. */
    public static final EnvironmentSpec NONE = new EnvironmentSpec(Optional.empty(), List.of(), List.of(), List.of(),
            DEFAULT_SETUP_TIMEOUT_S, Optional.empty(), true);

    public EnvironmentSpec {
        Objects.requireNonNull(interpreter, "interpreter");
        modules = List.copyOf(modules);
        sources = List.copyOf(sources);
        setup = List.copyOf(setup);
        Objects.requireNonNull(container, "container");
        if (setupTimeoutSeconds < 1) {
            throw new IllegalArgumentException("setup_timeout_s >= 1");
        }
    }

    /** A program named like a Python interpreter: python, python3, python3.11. */
    private static final Pattern PYTHON_NAME = Pattern.compile("python(\\d+(\\.\\d+)?)?");

    /** The program a worker runs for {@code program}: the environment's Python for a Python's name under {@code python: PATH}. */
    public String programFor(String program) {
        return interpreter.filter(i -> i.kind() == Kind.PYTHON && PYTHON_NAME.matcher(program).matches()).map(Interpreter::value)
                .orElse(program);
    }

    /** True when the node has something to activate, set up or run inside. */
    public boolean present() {
        return interpreter.isPresent() || !modules.isEmpty() || !sources.isEmpty() || !setup.isEmpty() || container.isPresent();
    }

    /** {@code venv: PATH}, {@code conda: NAME-or-PATH} or {@code python: PATH}. */
    public record Interpreter(Kind kind, String value) {
        public Interpreter {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(value, "value");
        }
    }

    /** The three ways to name the workers' Python; the name is the job file's key. */
    public enum Kind {
        VENV("venv"), CONDA("conda"), PYTHON("python");

        private final String key;

        Kind(String key) {
            this.key = key;
        }

        public String key() {
            return key;
        }
    }

    /**
     * {@code container:}: each worker runs in a container of its own, through {@code runtime}.
     *
     * @param mounts  more {@code SRC:DST[:OPTS]} mounts, besides the run's directory
     * @param options more options for the runtime's {@code run} (or {@code exec}), before the image
     */
    public record ContainerSpec(String image, String runtime, List<String> mounts, List<String> options) {
        public ContainerSpec {
            Objects.requireNonNull(image, "image");
            WorkerRuntimes.named(runtime);
            mounts = List.copyOf(mounts);
            options = List.copyOf(options);
        }
    }
}
