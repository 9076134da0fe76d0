package org.runjob.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What the agent's watchdog needs if the agent dies (SIGKILL, the OOM killer, a JVM crash): every
 * process of the job on this node, as {@code PID STARTTIME} lines in {@code DIR/procs} (the start
 * time guards against a reused pid), and the stop grace in {@code DIR/grace}. DIR is the private
 * directory ({@code mktemp -d}) the watchdog made and named in {@value #VARIABLE}; the watchdog is
 * the shell that started the agent and waits for it ({@link Watchdog}). When workers run in
 * containers, {@code DIR/containers} names the runtime and the run's label, for the watchdog to
 * remove what is left of them.
 *
 * <p>{@link #sweep} runs every {@value #EVERY_MS} ms while workers run: it walks the agent's tree
 * ({@link ChildTree}), reaps adopted children that have exited, and rewrites {@code procs}
 * atomically when the set changed. A process forked and orphaned within the last sweep before the
 * agent's death is the one that can escape.
 *
 * <p>The tree is the agent's only when the agent is its process's one purpose ({@link Agent#main});
 * an agent inside another program (a test's JVM) has no tree of its own: its sweep sees nothing,
 * so it neither reaps nor signals the other children of that program, and its workers are still
 * found through their own trees ({@link ProcessTree}).
 */
final class Registry {

    /** The environment variable naming the watchdog's directory; never passed on to workers. */
    static final String VARIABLE = "RUNJOB_AGENT_STATE";
    static final long EVERY_MS = 100;

    private final Optional<Path> dir;
    private final long self = ProcessHandle.current().pid();
    private final boolean ownsProcess;
    private String written = "";

    /** @param ownsProcess true when every descendant of this process is the agent's (the agent's own JVM) */
    Registry(Map<String, String> env, boolean ownsProcess) {
        this.ownsProcess = ownsProcess;
        this.dir = dir(env);
    }

    /** The watchdog's private directory named in {@code env}, when there is one. */
    static Optional<Path> dir(Map<String, String> env) {
        return Optional.ofNullable(env.get(VARIABLE)).map(Path::of).filter(Files::isDirectory);
    }

    void grace(long millis) {
        write("grace", Long.toString(millis));
    }

    /**
     * The containers the watchdog removes after the agent's death: {@code RUNTIME LABEL=VALUE}
     * lines, each the runtime's path and a label every container of this node's run carries.
     */
    void containers(String runtime, String label) {
        write("containers", runtime + " " + label + "\n");
    }

    /**
     * One look at the agent's tree: adopted zombies are reaped, the living are recorded.
     *
     * @param workerPids the workers the JVM started (and so waits for itself)
     * @return the living descendants
     */
    synchronized Set<Long> sweep(Collection<Long> workerPids) {
        Map<Long, ProcInfo.Stat> tree = ownsProcess ? ChildTree.of(self) : Map.of();
        for (ProcInfo.Stat p : tree.values()) {
            if (p.state() == 'Z' && p.parent() == self && !workerPids.contains(p.pid())) {
                Subreaper.reap(p.pid());
            }
        }
        Set<Long> living = tree.values().stream().filter(p -> p.state() != 'Z').map(ProcInfo.Stat::pid)
                .collect(Collectors.toCollection(LinkedHashSet::new));
        String lines = tree.values().stream().filter(p -> p.state() != 'Z')
                .map(p -> p.pid() + " " + p.startTicks() + "\n").collect(Collectors.joining());
        if (!lines.equals(written)) {
            write("procs", lines);
            written = lines;
        }
        return living;
    }

    private void write(String name, String text) {
        if (dir.isEmpty()) {
            return;
        }
        try {
            Path tmp = dir.get().resolve(name + ".tmp");
            Files.writeString(tmp, text, StandardCharsets.US_ASCII);
            Files.move(tmp, dir.get().resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            // the watchdog's directory is gone: nothing to tell it
        }
    }
}
