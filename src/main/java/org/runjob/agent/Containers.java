package org.runjob.agent;

import java.util.List;
import java.util.Optional;

import org.runjob.runtime.ContainerStore;

/** A node's containers in their runtime's record ({@link ContainerStore}), found and removed by label: what the worker runtime leaves is cleaned up. */
final class Containers {

    static final long COMMAND_MS = 30_000;

    private Containers() {
    }

    /** Removes every container, running or exited, that carries {@code label} ({@code KEY=VALUE}); quiet when there is none. */
    static void remove(ContainerStore store, String label) {
        List<String> ids = ids(store, label);
        if (!ids.isEmpty()) {
            Commands.run(new ProcessBuilder(store.removeArgv(ids)).redirectErrorStream(true), COMMAND_MS, 65536);
        }
    }

    /** How long a container's end is asked for again while its runtime cannot say it yet (a lock another container's teardown holds). */
    static final long ENDED_RETRY_MS = 2000;

    /**
     * How the one container that carries {@code label} ended, by its runtime's record; empty when
     * it has not ended or is not one. Asked again for up to {@value #ENDED_RETRY_MS} ms while the
     * runtime cannot answer: podman's commands can fail while several containers tear down at once.
     */
    static Optional<ContainerStore.Ended> ended(ContainerStore store, String label) {
        long deadline = System.nanoTime() + ENDED_RETRY_MS * 1_000_000;
        while (true) {
            List<String> ids = ids(store, label);
            if (ids.size() == 1) {
                Optional<ContainerStore.Ended> ended = Commands.run(new ProcessBuilder(store.endedArgv(ids.get(0)))
                        .redirectError(ProcessBuilder.Redirect.DISCARD), COMMAND_MS, 4096)
                        .filter(r -> r.code() == 0).flatMap(r -> ContainerStore.parseEnded(r.out().strip()));
                if (ended.isPresent()) {
                    return ended;
                }
            }
            if (System.nanoTime() > deadline) {
                return Optional.empty();
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Optional.empty();
            }
        }
    }

    /** The ids of the containers that carry {@code label}, running or not. */
    static List<String> ids(ContainerStore store, String label) {
        Optional<Commands.Ran> ran = Commands.run(new ProcessBuilder(store.listArgv(label)).redirectError(ProcessBuilder.Redirect.DISCARD),
                COMMAND_MS, 65536);
        return ran.filter(r -> r.code() == 0).map(r -> ContainerStore.ids(r.out())).orElse(List.of());
    }
}
