package org.runjob.agent;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
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
    /**
     * What a Python says about itself, tab-separated: sys.executable, its version, and torch's
     * version, CUDA version (torch.version.cuda) and NCCL version (its pip package's), read from
     * files without importing torch (an import costs seconds), {@code -} for each it lacks; then
     * the size of /dev/shm in bytes (what a container gives NCCL).
     */
    private static final String PROBE = String.join("\n",
            "import os, re, sys",
            "torch = cuda = nccl = '-'",
            "try:",
            "    import importlib.util",
            "    spec = importlib.util.find_spec('torch')",
            "    if spec is not None and spec.origin:",
            "        with open(os.path.join(os.path.dirname(spec.origin), 'version.py')) as f:",
            "            text = f.read()",
            "        m = re.search(r\"^__version__ = '([^']+)'\", text, re.M)",
            "        torch = m.group(1) if m else '-'",
            "        m = re.search(r\"^cuda(?:: *[^=]+)? = '([^']+)'\", text, re.M)",
            "        cuda = m.group(1) if m else '-'",
            "        import importlib.metadata as md",
            "        for d in ('nvidia-nccl-cu13', 'nvidia-nccl-cu12', 'nvidia-nccl-cu11'):",
            "            try:",
            "                nccl = md.version(d)",
            "                break",
            "            except Exception:",
            "                pass",
            "except Exception:",
            "    pass",
            "try:",
            "    st = os.statvfs('/dev/shm')",
            "    shm = st.f_blocks * st.f_frsize",
            "except Exception:",
            "    shm = -1",
            "print('\\t'.join([sys.executable, '%d.%d.%d' % sys.version_info[:3], torch, cuda, nccl, str(shm)]))");

    /** What a Python said about itself; empty optionals for what it lacks. */
    public record Python(String executable, String version, Optional<String> torch, Optional<String> cuda, Optional<String> nccl,
                         long shmBytes) {
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

    /** True for a program named like a Python interpreter: python, python3, python3.11. */
    public static boolean isPython(String program) {
        return PYTHON.matcher(Path.of(program).getFileName().toString()).matches();
    }

    /**
     * Runs {@code interpreter} (a path, or a container's command line ending with the program) once
     * with {@code env} ({@value #PYTHON_MS} ms at most, {@code ms} for a container) and says what it
     * is; {@code why} gets what it printed when it could not say.
     */
    public static Optional<Python> python(List<String> interpreter, Map<String, String> env, Path workdir, long ms,
                                          Consumer<String> why) {
        List<String> argv = new ArrayList<>(interpreter);
        argv.addAll(List.of("-c", PROBE));
        ProcessBuilder pb = new ProcessBuilder(argv).directory(workdir.toFile()).redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(env);
        Optional<Commands.Ran> ran = Commands.run(pb, ms, 16384);
        String[] parts = ran.filter(r -> r.code() == 0).map(r -> lastLine(r.out()).split("\t")).orElse(new String[0]);
        if (parts.length != 6) {
            why.accept(ran.map(r -> lastLine(r.out()).isEmpty() ? "exit code " + r.code() : lastLine(r.out())).orElse("it did not start"));
            return Optional.empty();
        }
        return Optional.of(new Python(parts[0], parts[1], known(parts[2]), known(parts[3]), known(parts[4]), Long.parseLong(parts[5])));
    }

    private static Optional<String> known(String v) {
        return v.equals("-") ? Optional.empty() : Optional.of(v);
    }

    private static String lastLine(String out) {
        List<String> lines = out.strip().lines().toList();
        return lines.isEmpty() ? "" : lines.get(lines.size() - 1).strip();
    }
}
