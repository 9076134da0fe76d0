package org.runjob.agent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.runjob.protocol.ContainerStart;
import org.runjob.protocol.EnvironmentReply;
import org.runjob.protocol.EnvironmentRequest;
import org.runjob.runtime.ImageCheck;
import org.runjob.runtime.WorkerRuntime;
import org.runjob.runtime.WorkerRuntimes;
import org.runjob.runtime.WorkerStartArgs;

/**
 * Answers ENVIRONMENT: the environment the node's workers will get, found as they will get it.
 *
 * <ol>
 *   <li>{@link Activation} (outside a container): what the modules, scripts and interpreter change.</li>
 *   <li>{@link Setup}, when the request has commands, in that environment (inside the container
 *       when there is one), its lines going to {@code output}.</li>
 *   <li>The program: found on the activated PATH from the run's directory, as execvp finds it; a
 *       Python, or a Python inside the container (the image checked first), then says what it is
 *       and which torch, CUDA and NCCL it has.</li>
 * </ol>
 * The first step that fails ends the answer with its error.
 */
final class NodeEnvironment {

    /** A container's first start may unpack its image: longer than a bare Python's answer. */
    static final long CONTAINER_PROBE_MS = 120_000;

    private NodeEnvironment() {
    }

    /**
     * @param agentEnv the agent's own environment
     * @param dir      the run's directory
     * @param meta     the workdir's {@code .runjob}, where setup markers are kept
     * @param scratch  a private directory of the agent's
     */
    static EnvironmentReply answer(EnvironmentRequest request, Map<String, String> agentEnv, Path dir, Path meta, Path scratch,
                                   Consumer<String> output) {
        Map<String, String> facts = new LinkedHashMap<>();
        Map<String, String> given = new LinkedHashMap<>(agentEnv);
        given.putAll(request.env());
        Optional<ContainerStart> container = request.container();
        Activation.Result activated = container.isPresent() ? new Activation.Result(Map.of(), List.of(), null)
                : Activation.run(Activation.steps(request, dir, !request.shipped()), given, dir, scratch);
        if (activated.error() != null) {
            facts.put(EnvironmentReply.ACTIVATION_ERROR, activated.error());
            return new EnvironmentReply(facts, Map.of(), List.of());
        }
        Map<String, String> env = new LinkedHashMap<>(given);
        activated.unset().forEach(env::remove);
        env.putAll(activated.set());
        if (container.isPresent() && !image(container.get(), env, facts)) {
            return new EnvironmentReply(facts, activated.set(), activated.unset());
        }
        String run = request.env().getOrDefault("RUNJOB_RUN_ID", "setup");
        if (request.setupCommands().isEmpty()) {
            facts.put(EnvironmentReply.SETUP, "none");
        } else {
            Map<String, String> setupEnv = Commands.withoutRc(env);
            Optional<Path> tmp = container.isPresent() ? Optional.empty() : privateTmp(scratch);
            tmp.ifPresent(t -> setupEnv.put("TMPDIR", t.toString()));
            Setup.Result setup;
            try {
                setup = Setup.run(meta, request.setupKey(), request.setupCommands(), request.setup() == EnvironmentRequest.Setup.CHECK,
                        request.setup() == EnvironmentRequest.Setup.FORCE, request.setupTimeoutMillis(), dir, setupEnv,
                        c -> inContainer(container, dir, request, run, List.of("/bin/sh", "-c", c)).orElse(Commands.bash(c)),
                        output);
            } finally {
                tmp.ifPresent(NodeEnvironment::deleteTree);
            }
            facts.put(EnvironmentReply.SETUP, setup.state());
            facts.put(EnvironmentReply.SETUP_SECONDS, String.format(Locale.ROOT, "%.3f", setup.seconds()));
            if (setup.error() != null) {
                facts.put(EnvironmentReply.SETUP_ERROR, setup.error());
                return new EnvironmentReply(facts, activated.set(), activated.unset());
            }
        }
        if (container.isEmpty() && !"due".equals(facts.get(EnvironmentReply.SETUP))) {
            Optional<String> missing = missingInterpreter(request, env);
            if (missing.isPresent()) {
                facts.put(EnvironmentReply.ACTIVATION_ERROR, missing.get());
                return new EnvironmentReply(facts, activated.set(), activated.unset());
            }
        }
        program(request, env, dir, container, run, facts);
        return new EnvironmentReply(facts, activated.set(), activated.unset());
    }

    /**
     * A directory of this setup's own for TMPDIR (mode 700, in the agent's private directory), so
     * setups of two environments in one shared workdir never meet in pip's build directories.
     */
    private static Optional<Path> privateTmp(Path scratch) {
        try {
            Files.createDirectories(scratch);
            return Optional.of(Files.createTempDirectory(scratch, "setup-tmp-"));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Removes {@code dir} and what is under it, following no symlink. */
    private static void deleteTree(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException | UncheckedIOException e) {
            // something the setup left there cannot be removed: the directory stays where it is
        }
    }

    /**
     * Why the job's venv or python is not on this node, once setup (which may make it) ran: a venv
     * whose directory or {@code bin/python} is missing, a python path that is no executable. Its
     * workers would otherwise run whatever Python comes next on PATH.
     */
    static Optional<String> missingInterpreter(EnvironmentRequest request, Map<String, String> env) {
        switch (request.interpreter()) {
            case "venv" -> {
                Path v = Path.of(env.getOrDefault("VIRTUAL_ENV", request.interpreterValue()));
                if (!Files.isDirectory(v)) {
                    return Optional.of("no venv " + v + " on this node (no such directory): make it there, or fix environment.venv");
                }
                if (!Files.isExecutable(v.resolve("bin/python")) && !Files.isExecutable(v.resolve("bin/python3"))) {
                    return Optional.of(v + " on this node is no venv: it has no bin/python");
                }
                return Optional.empty();
            }
            case "python" -> {
                String value = request.interpreterValue();
                if (!value.contains("/")) {
                    return Optional.empty();
                }
                Path p = value.equals("~") || value.startsWith("~/")
                        ? Path.of(env.getOrDefault("HOME", "/"), value.substring(1).replaceFirst("^/", "")) : Path.of(value);
                return Files.isRegularFile(p) && Files.isExecutable(p) ? Optional.empty()
                        : Optional.of("no python " + p + " on this node (no such executable): install it there, or fix environment.python");
            }
            default -> {
                return Optional.empty();
            }
        }
    }

    private static void program(EnvironmentRequest request, Map<String, String> env, Path dir, Optional<ContainerStart> container,
                                String run, Map<String, String> facts) {
        String program = request.program();
        List<String> interpreter;
        long ms = Programs.PYTHON_MS;
        if (container.isPresent()) {
            if (!Programs.isPython(program)) {
                facts.put(EnvironmentReply.PROGRAM_PATH, program + " (in " + container.get().image() + ")");
                return;
            }
            interpreter = inContainer(container, dir, request, run, List.of(program)).orElseThrow();
            ms = CONTAINER_PROBE_MS;
        } else {
            Optional<Path> found = Programs.find(program, env.get("PATH"), dir);
            if (found.isEmpty()) {
                Programs.missing(program, env.get("PATH"), dir).ifPresent(m -> facts.put(EnvironmentReply.PROGRAM_ERROR,
                        m + (request.interpreter().isEmpty() ? "" : " (in the " + request.interpreter() + " " + request.interpreterValue() + ")")));
                return;
            }
            facts.put(EnvironmentReply.PROGRAM_PATH, home(found.get().toString(), env));
            if (!Programs.isPython(program)) {
                return;
            }
            interpreter = List.of(found.get().toString());
        }
        List<String> why = new ArrayList<>();
        Optional<Programs.Python> python = Programs.python(interpreter, env, dir, ms, why::add);
        if (python.isEmpty()) {
            if (container.isPresent()) {
                facts.put(EnvironmentReply.PROGRAM_ERROR, "cannot run " + program + " in " + container.get().image() + ": " + String.join("", why));
            }
            return;
        }
        Programs.Python py = python.get();
        facts.put(EnvironmentReply.PROGRAM_PATH, home(py.executable(), env) + (container.isPresent() ? " (in " + container.get().image() + ")" : ""));
        facts.put(EnvironmentReply.PYTHON, py.version());
        py.torch().ifPresent(t -> facts.put(EnvironmentReply.TORCH, t));
        py.cuda().ifPresent(c -> facts.put(EnvironmentReply.CUDA, c));
        py.nccl().ifPresent(n -> facts.put(EnvironmentReply.NCCL, n));
        if (container.isPresent() && py.shmBytes() >= 0) {
            facts.put(EnvironmentReply.SHM_BYTES, Long.toString(py.shmBytes()));
        }
    }

    /** The container's command line for {@code argv}, with the request's variables passed in by name. */
    private static Optional<List<String>> inContainer(Optional<ContainerStart> container, Path dir, EnvironmentRequest request, String run,
                                                      List<String> argv) {
        String agent = WorkerProcess.agentId();
        return container.map(c -> c.argv(new WorkerStartArgs(dir.toString(), List.of(), List.copyOf(request.env().keySet()), List.of(), run, -1,
                agent, agent + "-probe", argv)));
    }

    private static final Pattern NO_DAEMON = Pattern.compile("(?i)cannot connect to the docker daemon|is the docker daemon running"
            + "|docker\\.sock.*(connection refused|no such file)");
    private static final Pattern NOT_ALLOWED = Pattern.compile("(?i)permission denied.*(docker\\.sock|podman\\.sock)");

    /**
     * Why {@code RUNTIME image inspect IMAGE} failed, from its last line: a daemon that does not
     * answer and a socket this user may not use are named as such, not as a missing image.
     */
    static String inspectFailed(String runtime, String image, String lastLine) {
        String said = " (" + runtime + " image inspect: " + lastLine + ")";
        if (NO_DAEMON.matcher(lastLine).find()) {
            return "the " + runtime + " daemon does not answer on this node" + said + ": start it there (systemctl start " + runtime + ")";
        }
        if (NOT_ALLOWED.matcher(lastLine).find()) {
            return "this user may not use " + runtime + " on this node" + said + ": add the user to its group there, or use rootless podman";
        }
        return "image " + image + " is not on this node" + said + ": pull or load it there";
    }

    /** The image is there: its id and digest go into the facts; else the error does, and false. */
    private static boolean image(ContainerStart c, Map<String, String> env, Map<String, String> facts) {
        WorkerRuntime rt = c.workerRuntime();
        Optional<Path> program = Programs.find(rt.program(), env.get("PATH"), Path.of("/"));
        if (program.isEmpty()) {
            facts.put(EnvironmentReply.CONTAINER_ERROR, "no " + rt.program() + " on this node's PATH" + others(rt, env));
            return false;
        }
        ImageCheck check = rt.imageCheck(c.image());
        if (check instanceof ImageCheck.File file) {
            if (!Files.exists(Workdirs.resolve(file.path(), env))) {
                facts.put(EnvironmentReply.CONTAINER_ERROR, "no image file " + file.path() + " on this node");
                return false;
            }
            facts.put(EnvironmentReply.IMAGE, c.image());
            return true;
        }
        if (!(check instanceof ImageCheck.Inspect inspect)) {
            facts.put(EnvironmentReply.IMAGE, c.image());
            return true;
        }
        List<String> argv = new ArrayList<>(inspect.argv());
        argv.set(0, program.get().toString());
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(env);
        Optional<Commands.Ran> ran = Commands.run(pb, 60_000, 8192);
        if (ran.isEmpty() || ran.get().code() != 0) {
            facts.put(EnvironmentReply.CONTAINER_ERROR, inspectFailed(rt.program(), c.image(),
                    ran.map(r -> r.out().strip().lines().reduce((a, b) -> b).orElse("exit " + r.code())).orElse("did not run")));
            return false;
        }
        String[] parts = ran.get().out().strip().split(" ");
        facts.put(EnvironmentReply.IMAGE, c.image() + " " + parts[0].substring(0, Math.min(12, parts[0].length())));
        if (parts.length > 1 && !parts[1].isBlank() && !parts[1].equals("<none>")) {
            facts.put(EnvironmentReply.IMAGE_DIGEST, parts[1]);
        }
        return true;
    }

    /**
     * The other runtimes this node has, as a hint ({@code : it has enroot (runtime: enroot)}), so a
     * Slurm site with pyxis's enroot and no podman learns which runtime to name; empty when none.
     */
    private static String others(WorkerRuntime missing, Map<String, String> env) {
        List<String> found = WorkerRuntimes.all().stream().filter(r -> !r.program().equals(missing.program()))
                .filter(r -> Programs.find(r.program(), env.get("PATH"), Path.of("/")).isPresent()).map(WorkerRuntime::name).toList();
        return found.isEmpty() ? "" : ": it has " + String.join(", ", found) + " (runtime: " + found.get(0) + ")";
    }

    /** {@code path} with the home directory as {@code ~}. */
    private static String home(String path, Map<String, String> env) {
        String home = env.get("HOME");
        return home != null && home.length() > 1 && path.startsWith(home + "/") ? "~" + path.substring(home.length()) : path;
    }
}
