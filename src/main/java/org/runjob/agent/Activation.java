package org.runjob.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.runjob.protocol.EnvironmentRequest;

/**
 * Activates a node's environment once and captures what it changed: a constant bash script
 * ({@link #SCRIPT}, run with {@code --noprofile --norc}, without BASH_ENV or ENV, so no rc file of
 * the login shell takes part) loads each module, sources each script, then puts the interpreter
 * first on PATH, and writes its environment ({@code env -0}) to a file. The steps come as its
 * arguments ({@code m:NAME}, {@code s:SCRIPT}, {@code v:VENV}, {@code c:CONDA}, {@code p:PYTHON}),
 * never as script text. The difference from the environment it was given is what the workers get.
 *
 * <p>Modules: a {@code module} command already there (Lmod exports it as a function), else the
 * first of {@code $MODULESHOME/init/bash} and the usual Lmod and Environment Modules init scripts.
 * conda: {@code $CONDA_EXE}, else {@code conda} on PATH, else one in the usual install places;
 * its own {@code shell.posix activate} output is evaluated, so activate.d scripts run as in a shell.
 */
final class Activation {

    /** What the activation changed: variables set (new or changed) and unset; or why it failed. */
    record Result(Map<String, String> set, List<String> unset, String error) {
    }

    static final long TIMEOUT_MS = 120_000;
    /** Variables the shell itself sets or that only make sense to it: never part of the difference. */
    private static final Set<String> SHELL_OWN = Set.of("_", "SHLVL", "PWD", "OLDPWD", "BASH_ENV", "ENV", "RUNJOB_ENV_OUT");

    static final String SCRIPT = String.join("\n",
            "exec 1>&2",
            "src() { . \"$RUNJOB_SRC\"; }",
            "for a in \"$@\"; do",
            "  k=${a%%:*}; v=${a#*:}",
            "  case $v in \"~\") v=$HOME;; \"~/\"*) v=$HOME/${v#\"~/\"};; esac",
            "  case $k in",
            "    m)",
            "      if ! command -v module >/dev/null 2>&1; then",
            "        for f in \"${MODULESHOME:-/nonexistent}/init/bash\" /etc/profile.d/lmod.sh /etc/profile.d/modules.sh"
                    + " /usr/share/lmod/lmod/init/bash /usr/share/modules/init/bash; do",
            "          if [ -r \"$f\" ]; then . \"$f\"; break; fi",
            "        done",
            "      fi",
            "      command -v module >/dev/null 2>&1 || { echo \"runjob: this node has no module system (no module command,"
                    + " no MODULESHOME, no Lmod or Environment Modules init script): cannot load $v\"; exit 101; }",
            "      module load \"$v\" || { echo \"runjob: module load $v failed\"; exit 102; } ;;",
            "    s)",
            "      [ -r \"$v\" ] || { echo \"runjob: cannot read $v to source it\"; exit 103; }",
            "      RUNJOB_SRC=$v; src || { echo \"runjob: sourcing $v failed (exit $?)\"; exit 103; }; unset RUNJOB_SRC ;;",
            "    v)",
            "      case $v in /*) ;; *) v=$HOME/$v;; esac",
            "      export VIRTUAL_ENV=$v; PATH=$v/bin:$PATH; unset PYTHONHOME ;;",
            "    c)",
            "      conda=${CONDA_EXE:-}",
            "      [ -n \"$conda\" ] && [ -x \"$conda\" ] || conda=$(command -v conda 2>/dev/null) || conda=",
            "      if [ -z \"$conda\" ]; then",
            "        for f in \"$HOME/miniforge3/bin/conda\" \"$HOME/miniconda3/bin/conda\" \"$HOME/anaconda3/bin/conda\" /opt/conda/bin/conda; do",
            "          if [ -x \"$f\" ]; then conda=$f; break; fi",
            "        done",
            "      fi",
            "      [ -n \"$conda\" ] || { echo \"runjob: no conda on this node (no CONDA_EXE, none on PATH, none in ~/miniforge3,"
                    + " ~/miniconda3, ~/anaconda3 or /opt/conda): cannot activate $v\"; exit 104; }",
            "      hook=$(\"$conda\" shell.posix activate \"$v\") || { echo \"runjob: $conda cannot activate $v\"; exit 105; }",
            "      eval \"$hook\" || { echo \"runjob: activating $v failed\"; exit 105; } ;;",
            "    p) PATH=${v%/*}:$PATH ;;",
            "  esac",
            "done",
            "export PATH",
            "env -0 > \"$RUNJOB_ENV_OUT\"");

    private Activation() {
    }

    /** The script's arguments for {@code request}, in activation order. */
    static List<String> steps(EnvironmentRequest request, Path dir, boolean skipMissingSources) {
        List<String> out = new ArrayList<>();
        request.modules().forEach(m -> out.add("m:" + m));
        for (String s : request.sources()) {
            boolean relative = !s.startsWith("/") && !s.startsWith("~");
            if (relative && skipMissingSources && !Files.exists(dir.resolve(s))) {
                continue; // not shipped yet (a check): sourced at launch
            }
            out.add("s:" + (relative ? dir.resolve(s).toString() : s));
        }
        switch (request.interpreter()) {
            case "venv" -> out.add("v:" + request.interpreterValue());
            case "conda" -> out.add("c:" + request.interpreterValue());
            case "python" -> out.add("p:" + request.interpreterValue());
            default -> { }
        }
        return out;
    }

    /**
     * Runs the activation in {@code dir} with {@code given} as its environment; {@code scratch} is a
     * private directory of the agent's for the environment file.
     */
    static Result run(List<String> steps, Map<String, String> given, Path dir, Path scratch) {
        Map<String, String> base = new LinkedHashMap<>(given);
        base.keySet().removeAll(SHELL_OWN);
        if (steps.isEmpty()) {
            return new Result(Map.of(), List.of(), null);
        }
        Path out = null;
        Path log = null;
        try {
            Files.createDirectories(scratch);
            out = Files.createTempFile(scratch, "env-", ".bin");
            log = Files.createTempFile(scratch, "activate-", ".log");
            List<String> argv = new ArrayList<>(List.of(shell(), "--noprofile", "--norc", "-c", SCRIPT, "runjob-activate"));
            argv.addAll(steps);
            ProcessBuilder pb = new ProcessBuilder(argv).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
            pb.environment().clear();
            pb.environment().putAll(base);
            pb.environment().put("RUNJOB_ENV_OUT", out.toString());
            Process p = pb.start();
            if (!p.waitFor(TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                return new Result(Map.of(), List.of(), "the activation did not end within " + TIMEOUT_MS / 1000 + " s" + tail(log));
            }
            byte[] env = Files.readAllBytes(out);
            if (p.exitValue() != 0 || env.length == 0) {
                return new Result(Map.of(), List.of(), lastLine(log).orElse("the activation failed (exit " + p.exitValue() + ")")
                        + tail(log));
            }
            return difference(base, parse(env));
        } catch (IOException e) {
            return new Result(Map.of(), List.of(), "cannot activate the environment: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(Map.of(), List.of(), "interrupted");
        } finally {
            deleteQuietly(out);
            deleteQuietly(log);
        }
    }

    private static String shell() {
        return Files.isExecutable(Path.of("/bin/bash")) ? "/bin/bash" : "bash";
    }

    /** {@code env -0}'s output as a map. */
    static Map<String, String> parse(byte[] env) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String entry : new String(env, StandardCharsets.UTF_8).split("\0")) {
            int eq = entry.indexOf('=');
            if (eq > 0) {
                out.put(entry.substring(0, eq), entry.substring(eq + 1));
            }
        }
        return out;
    }

    /** What {@code after} set and unset relative to {@code before}, the shell's own variables aside. */
    static Result difference(Map<String, String> before, Map<String, String> after) {
        Map<String, String> set = new LinkedHashMap<>();
        after.forEach((k, v) -> {
            if (!SHELL_OWN.contains(k) && !v.equals(before.get(k))) {
                set.put(k, v);
            }
        });
        List<String> unset = before.keySet().stream().filter(k -> !after.containsKey(k) && !SHELL_OWN.contains(k)).toList();
        return new Result(set, unset, null);
    }

    /** The last line a failed activation printed (the script's own message, or the tool's). */
    private static Optional<String> lastLine(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8).stream().filter(l -> !l.isBlank()).toList();
            return lines.isEmpty() ? Optional.empty() : Optional.of(lines.get(lines.size() - 1).strip());
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Up to 5 lines before the last, for the user: what the module or script said. */
    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8).stream().filter(l -> !l.isBlank()).toList();
            List<String> before = lines.subList(Math.max(0, lines.size() - 6), Math.max(0, lines.size() - 1));
            return before.isEmpty() ? "" : " (before it: " + String.join(" | ", before) + ")";
        } catch (IOException e) {
            return "";
        }
    }

    private static void deleteQuietly(Path p) {
        if (p != null) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException e) {
                // a temporary file of the agent's private directory: removed with it
            }
        }
    }
}
