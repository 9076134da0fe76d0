package org.runjob.agent;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** A node's podman or docker containers, found and removed by label: what the worker runtime leaves is cleaned up. */
final class Containers {

    static final long COMMAND_MS = 30_000;

    private Containers() {
    }

    /** Removes every container, running or exited, that carries {@code label} ({@code KEY=VALUE}); quiet when there is none. */
    static void remove(String runtime, String label) {
        List<String> ids = ids(runtime, label);
        if (!ids.isEmpty()) {
            List<String> argv = new ArrayList<>(List.of(runtime, "rm", "-f"));
            argv.addAll(ids);
            Commands.run(new ProcessBuilder(argv).redirectErrorStream(true), COMMAND_MS, 65536);
        }
    }

    /** The ids of the containers that carry {@code label}, running or not. */
    static List<String> ids(String runtime, String label) {
        Optional<Commands.Ran> ran = Commands.run(new ProcessBuilder(runtime, "ps", "-aq", "--filter", "label=" + label)
                .redirectError(ProcessBuilder.Redirect.DISCARD), COMMAND_MS, 65536);
        return ran.filter(r -> r.code() == 0).map(r -> r.out().lines().map(String::strip).filter(l -> l.matches("[0-9a-f]{6,64}")).toList())
                .orElse(List.of());
    }
}
