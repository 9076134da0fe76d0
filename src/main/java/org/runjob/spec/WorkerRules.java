package org.runjob.spec;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.runjob.runtime.WorkerRuntimes;

import tools.jackson.databind.JsonNode;

/**
 * The semantic rules on what a worker runs in ({@link SemanticCheck} runs them): an environment
 * block names at most one interpreter, a relative sourced script is a shipped file, a container
 * names a registered runtime and an image it can start and excludes what activates on the host;
 * job and node {@code env} set none of runjob's reserved variables and no variable longer than exec
 * allows; the workdir is not {@code /}, a home directory itself, or a system directory.
 */
final class WorkerRules {

    private WorkerRules() {
    }

    /** Keys of an {@code environment:} block that name the workers' Python: at most one per block. */
    private static final List<String> INTERPRETERS = List.of("venv", "conda", "python");
    /** What a container's image provides instead: activated on the host, they would not reach inside it. */
    private static final List<String> NOT_WITH_CONTAINER = List.of("venv", "conda", "modules", "source");

    /**
     * An environment block: at most one interpreter; a relative {@code source} script is a shipped
     * file (it is sourced in the run's directory); a container excludes what activates on the host.
     */
    static void environment(Problems problems, JsonNode e, String pointer, Set<String> shipped) {
        if (e == null || !e.isObject()) {
            return;
        }
        List<String> named = INTERPRETERS.stream().filter(e::has).toList();
        for (String extra : named.subList(Math.min(1, named.size()), named.size())) {
            problems.atKey(pointer + "/" + extra, "an environment names one interpreter: " + named.get(0) + " or " + extra + ", not both");
        }
        JsonNode sources = e.get("source");
        if (sources != null && sources.isArray()) {
            for (int i = 0; i < sources.size(); i++) {
                String s = sources.get(i).isString() ? sources.get(i).stringValue() : "";
                String first = Path.of(s.isEmpty() ? "." : s).normalize().getName(0).toString();
                if (!s.isEmpty() && !s.startsWith("/") && !s.startsWith("~") && !shipped.contains(first)) {
                    problems.at(LocatedJson.child(pointer + "/source", i), "'" + s + "' is neither an absolute path on the node nor a"
                            + " shipped file: add it to files, or give its absolute path");
                }
            }
        }
        if (e.has("container")) {
            JsonNode runtime = e.get("container").get("runtime");
            if (runtime != null && runtime.isString() && WorkerRuntimes.find(runtime.stringValue()).isEmpty()) {
                problems.at(pointer + "/container/runtime", "unknown container runtime '" + runtime.stringValue() + "': must be "
                        + WorkerRuntimes.names());
            }
            JsonNode image = e.get("container").get("image");
            WorkerRuntimes.find(runtime != null && runtime.isString() ? runtime.stringValue() : WorkerRuntimes.DEFAULT)
                    .flatMap(rt -> image != null && image.isString() ? rt.imageProblem(image.stringValue()) : Optional.empty())
                    .ifPresent(why -> problems.at(pointer + "/container/image", why));
            for (String k : NOT_WITH_CONTAINER) {
                if (e.has(k)) {
                    problems.atKey(pointer + "/" + k, k + " activates on the node, outside the container: with a container the image"
                            + " is the environment (python: PATH names an interpreter inside it)");
                }
            }
        }
    }

    private static boolean insideRunDirectory(String path) {
        if (path.isEmpty() || path.startsWith("/") || path.startsWith("~") || path.endsWith("/")) {
            return false;
        }
        for (String part : path.split("/")) {
            if (part.equals("..") || part.equals(".") || part.isEmpty()) {
                return false;
            }
        }
        return true;
    }

    /** An {@code env} map: no reserved name, a metrics file inside the run's directory, no entry longer than exec passes. */
    static void variables(Problems problems, JsonNode env, String pointer) {
        if (env == null || !env.isObject()) {
            return;
        }
        for (String name : env.propertyNames()) {
            ReservedEnv.why(name).ifPresent(why ->
                    problems.atKey(LocatedJson.child(pointer, name), name + " is set by runjob for each worker (" + why + ")"));
            JsonNode value = env.get(name);
            if (name.equals(ReservedEnv.METRICS_FILE) && !insideRunDirectory(value.isString() ? value.stringValue() : "")) {
                problems.at(LocatedJson.child(pointer, name), name + " must be a file's path relative to the run's directory, without .."
                        + " (e.g. out/metrics.jsonl)");
            }
            int bytes = name.getBytes(StandardCharsets.UTF_8).length + 1
                    + (value.isString() ? value.stringValue() : value.toString()).getBytes(StandardCharsets.UTF_8).length;
            if (bytes > MAX_ENV_ENTRY_BYTES) {
                problems.at(LocatedJson.child(pointer, name), name + "=... is " + bytes + " bytes; Linux passes at most "
                        + MAX_ENV_ENTRY_BYTES + " bytes per variable to a program (MAX_ARG_STRLEN): ship large values as a file");
            }
        }
    }

    /** Linux's MAX_ARG_STRLEN (32 pages of 4 KiB) less the terminating NUL: the longest NAME=value exec accepts. */
    static final int MAX_ENV_ENTRY_BYTES = 131_071;

    /** Directories a workdir cannot be meant to be: files land in it and workers start there. */
    private static final Set<String> SYSTEM_DIRS = Set.of("/", "/bin", "/boot", "/dev", "/etc", "/home",
            "/lib", "/lib32", "/lib64", "/proc", "/run", "/sbin", "/sys", "/tmp", "/usr", "/var", "/var/tmp");
    private static final Set<String> NEVER_UNDER = Set.of("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32",
            "/lib64", "/proc", "/sbin", "/sys", "/usr");

    /** A workdir that is a system directory, under one, or a home directory itself. */
    static void workdir(Problems problems, JsonNode value, String pointer) {
        if (value == null || !value.isString()) {
            return;
        }
        String w = value.stringValue();
        String norm = w.startsWith("/") ? Path.of(w).normalize().toString() : w.replaceAll("/+$", "");
        String why = null;
        if (norm.equals("~") || norm.equals("$HOME") || norm.equals("${HOME}") || norm.isEmpty() || norm.equals(".")) {
            why = "is a home directory itself";
        } else if (norm.matches("/home/[^/]+") || norm.equals("/root")) {
            why = "is a home directory itself";
        } else if (SYSTEM_DIRS.contains(norm)) {
            why = "is a system directory";
        } else if (NEVER_UNDER.stream().anyMatch(d -> norm.startsWith(d + "/"))) {
            why = "is inside a system directory";
        }
        if (why != null) {
            problems.at(pointer, "workdir '" + w + "' " + why + ": runjob writes files there and starts workers in it; "
                    + "name a directory of its own, e.g. ~/.runjob/JOB or /scratch/USER/JOB");
        }
    }
}
