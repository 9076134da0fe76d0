package org.runjob.run;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

import org.runjob.backends.Backends;
import org.runjob.node.Backend;
import org.runjob.node.NodeException;
import org.runjob.plan.Inventory;
import org.runjob.plan.LaunchPlan;
import org.runjob.plan.Planner;
import org.runjob.plan.PlanningException;
import org.runjob.plan.RunId;
import org.runjob.spec.InvalidSpecException;
import org.runjob.spec.JobSpec;
import org.runjob.spec.Problem;
import org.runjob.spec.SpecLoader;

/** Loading and planning as the commands share them, with problems printed the one way. */
public final class Jobs {

    private Jobs() {
    }

    /** Loads {@code file}; prints its problems and returns null when it is invalid. */
    public static SpecLoader.Loaded load(Io io, String file, List<String> sets) {
        return load(io, file, sets, List.of());
    }

    /** A loader of job files with the registered backends and {@code io}'s environment. */
    public static SpecLoader loader(Io io) {
        return new SpecLoader(io.env(), Backends.specs());
    }

    /** The same, with {@code args} appended to the entrypoint's arguments ({@code runjob FILE -- ARGS}). */
    public static SpecLoader.Loaded load(Io io, String file, List<String> sets, List<String> args) {
        return load(io, file, sets, args, 0);
    }

    /** The same, as point {@code point} of the job's sweep (a point the sweep lacks is said, and null returned). */
    public static SpecLoader.Loaded load(Io io, String file, List<String> sets, List<String> args, int point) {
        try {
            return loader(io).load(Path.of(file), file, sets, point).withEntrypointArgs(args);
        } catch (IllegalArgumentException e) {
            io.err().println("runjob: " + file + ": " + e.getMessage());
            return null;
        } catch (InvalidSpecException e) {
            printProblems(io, file, e.problems());
            return null;
        }
    }

    /** A job as its backend resolved it (nodes given as a count named by the allocation that holds them), with that backend. */
    public record Resolved(Backend backend, JobSpec spec) {
    }

    /**
     * {@code spec} resolved by its backend: the one step check, gpus and a run share between loading
     * a job and reaching its nodes. Empty, with why on stderr, when the backend cannot name the
     * job's nodes (a count outside any allocation).
     */
    public static Optional<Resolved> resolve(Io io, JobSpec spec) {
        Backend backend = Backends.of(spec);
        try {
            return Optional.of(new Resolved(backend, backend.resolve(spec, io.env())));
        } catch (NodeException e) {
            io.err().println("runjob: " + e.getMessage());
            return Optional.empty();
        }
    }

    /** Loads and plans {@code file} (as sweep point {@code point}) with nothing probed (a dry run); prints problems and returns null on failure. */
    public static LaunchPlan dryRunPlan(Io io, String file, List<String> sets, int point, List<String> args) throws PlanningException {
        SpecLoader.Loaded loaded = load(io, file, sets, args, point);
        if (loaded == null) {
            return null;
        }
        String runId = RunId.of(io.clock().instant(), io.random().getAsInt());
        return Planner.plan(loaded.spec(), Inventory.unprobed(Backends.of(loaded.spec()).gpus()), runId, OptionalInt.empty());
    }

    /**
     * What every command that leaves a run going on (--detach, submit) prints once it has: how to
     * reach the run (on stderr), then its id alone on stdout.
     *
     * @param options what the commands need besides the id ({@code --logs-dir DIR}), or ""
     */
    public static void handedOver(Io io, String runId, String options) {
        io.err().println("  follow it:  runjob logs -f " + runId + options);
        io.err().println("  see it:     runjob status " + runId + options);
        io.err().println("  stop it:    runjob stop " + runId + options);
        io.out().println(runId);
        io.out().flush();
    }

    /** Runs {@code action} once runjob is interrupted (Ctrl-C), on a daemon thread; interrupt the thread to call it off. */
    public static Thread onInterrupt(Io io, Runnable action, String name) {
        Thread watch = new Thread(() -> {
            while (io.interrupts().count() == 0) {
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
            }
            action.run();
        }, name);
        watch.setDaemon(true);
        watch.start();
        return watch;
    }

    /**
     * Waits {@code millis}, or less when runjob is interrupted (Ctrl-C, SIGTERM) meanwhile.
     *
     * @return whether runjob was interrupted, before or during the wait
     */
    public static boolean pauseUnlessInterrupted(Io io, long millis) throws InterruptedException {
        long end = System.nanoTime() + millis * 1_000_000;
        while (io.interrupts().count() == 0) {
            long left = (end - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                return false;
            }
            Thread.sleep(Math.min(left, 50));
        }
        return true;
    }

    public static void printProblems(Io io, String file, List<Problem> problems) {
        problems.forEach(p -> io.err().println(p));
        io.err().printf("%s: %d problem%s%n", file, problems.size(), problems.size() == 1 ? "" : "s");
        io.err().flush();
    }
}
