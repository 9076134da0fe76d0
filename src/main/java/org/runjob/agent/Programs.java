package org.runjob.agent;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A worker's program as execvp finds it, and, for a Python, what it really is: the interpreter
 * behind a venv, a conda environment or a pyenv shim ({@code sys.executable}), its version and the
 * torch version its path holds, read from torch's {@code version.py} without importing torch.
 */
public final class Programs {

    /** A Python interpreter by name: python, python3, python3.11. */
    private static final Pattern PYTHON = Pattern.compile("python(\\d+(\\.\\d+)?)?");
    static final long PYTHON_MS = 5000;
    /** torch's version from torch/version.py, found without importing torch (an import costs seconds). */
    private static final String PROBE = String.join("\n",
            "import os, re, sys",
            "torch = '-'",
            "try:",
            "    import importlib.util",
            "    spec = importlib.util.find_spec('torch')",
            "    if spec is not None and spec.origin:",
            "        with open(os.path.join(os.path.dirname(spec.origin), 'version.py')) as f:",
            "            m = re.search(r\"^__version__ = '([^']+)'\", f.read(), re.M)",
            "        torch = m.group(1) if m else '-'",
            "except Exception:",
            "    pass",
            "print(sys.executable, '%d.%d.%d' % sys.version_info[:3], torch)");

    /** What a Python said about itself. */
    public record Python(String executable, String version, Optional<String> torch) {
    }

    private Programs() {
    }

    /** Where {@code program} is found from {@code workdir} with this PATH, or empty. */
    public static Optional<Path> find(String program, String path, Path workdir) {
        if (program.contains("/")) {
            Path p = workdir.resolve(program);
            return Files.isRegularFile(p) && Files.isExecutable(p) ? Optional.of(p.normalize()) : Optional.empty();
        }
        for (String dir : (path == null ? "" : path).split(File.pathSeparator)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir).resolve(program);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return Optional.of(p.toAbsolutePath().normalize());
            }
        }
        return Optional.empty();
    }

    /** Why {@code program} cannot be run from {@code workdir} with this PATH, or empty when it can. */
    public static Optional<String> missing(String program, String path, Path workdir) {
        if (find(program, path, workdir).isPresent()) {
            return Optional.empty();
        }
        return Optional.of("cannot start " + program + (program.contains("/") ? ": no such executable file" : ": not found on the node's PATH"));
    }

    /**
     * When {@code program} is named like a Python, runs it once with the workers' environment
     * ({@value #PYTHON_MS} ms at most) and says what it is.
     */
    public static Optional<Python> python(Path program, Map<String, String> env, Path workdir) {
        if (!PYTHON.matcher(program.getFileName().toString()).matches()) {
            return Optional.empty();
        }
        ProcessBuilder pb = new ProcessBuilder(program.toString(), "-c", PROBE).directory(workdir.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        pb.environment().clear();
        pb.environment().putAll(env);
        return Commands.run(pb, PYTHON_MS, 4096).filter(r -> r.code() == 0).map(r -> r.out().strip().split(" ")).filter(parts -> parts.length == 3)
                .map(parts -> new Python(parts[0], parts[1], parts[2].equals("-") ? Optional.empty() : Optional.of(parts[2])));
    }
}
