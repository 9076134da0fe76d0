package org.runjob.run;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;

import org.runjob.plan.Planner;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;

/**
 * A job's quarantined nodes ({@link QuarantineFile}) avoided before any node is reached: a
 * quarantined spare is dropped, a quarantined node has a spare stand in for it (one that runs as
 * many workers, as far as the job file says, and not for the master when {@code rendezvous.addr}
 * names it), with a note on stderr for each. A quarantined node that no spare fits is an error
 * that names the reason and how to clear it. A job with {@code failure.quarantine_s: 0} avoids nothing.
 */
public final class Quarantined {

    private Quarantined() {
    }

    /** {@code spec} without its quarantined nodes; empty, with why on stderr, when one has no spare to stand in for it. */
    public static Optional<JobSpec> avoid(Io io, JobSpec spec) {
        return avoid(io, spec, false);
    }

    /**
     * As {@link #avoid(Io, JobSpec)}; with {@code placedByScheduler} (the job gave its nodes as a
     * count and the scheduler chose them: inside an allocation, a batch job's start) a quarantined
     * node is the scheduler's choice, not the job's: the run goes there, with a note, and the next
     * allocation runjob asks for keeps off it ({@code --exclude}).
     */
    public static Optional<JobSpec> avoid(Io io, JobSpec spec, boolean placedByScheduler) {
        if (spec.failure().quarantineSeconds() == 0) {
            return Optional.of(spec);
        }
        List<QuarantineFile.Entry> active = QuarantineFile.active(io.env(), io.clock().instant());
        if (active.isEmpty()) {
            return Optional.of(spec);
        }
        Set<String> dropped = new LinkedHashSet<>();
        for (NodeSpec spare : spec.spares()) {
            QuarantineFile.of(active, spare).ifPresent(e -> {
                io.err().println("runjob: note: spare " + spare.name() + " is not used: " + describe(e));
                dropped.add(spare.name());
            });
        }
        JobSpec avoided = dropped.isEmpty() ? spec : spec.withoutSpares(dropped);
        for (NodeSpec node : spec.nodes()) {
            Optional<QuarantineFile.Entry> entry = QuarantineFile.of(active, node);
            if (entry.isEmpty()) {
                continue;
            }
            if (placedByScheduler) {
                io.err().println("runjob: note: node " + node.name() + " is " + describe(entry.get()) + "; the scheduler placed the run there,"
                        + " so it runs there (runjob nodes --clear " + node.name() + " uses it again)");
                continue;
            }
            Optional<NodeSpec> standIn = fitting(avoided, node);
            if (standIn.isEmpty()) {
                io.err().println("runjob: node " + node.name() + " is " + describe(entry.get()) + "; no spare fits its place."
                        + " Use it again with: runjob nodes --clear " + node.name());
                return Optional.empty();
            }
            io.err().println("runjob: note: spare " + standIn.get().name() + " stands in for node " + node.name() + ", " + describe(entry.get())
                    + " (runjob nodes --clear " + node.name() + " uses it again)");
            avoided = avoided.withStandIn(node.name(), standIn.get());
        }
        return Optional.of(avoided);
    }

    /** The machines {@code spec} keeps off (every quarantined one in force), for a scheduler that picks the nodes itself. */
    public static Set<String> machines(Io io, JobSpec spec) {
        return spec.failure().quarantineSeconds() == 0 ? Set.of() : machines(io);
    }

    /** Every machine quarantined now, whatever a job says of quarantine. */
    public static Set<String> machines(Io io) {
        Set<String> out = new TreeSet<>();
        QuarantineFile.active(io.env(), io.clock().instant()).forEach(e -> out.add(e.machine()));
        return out;
    }

    /** The first spare of {@code spec} that runs as many workers as {@code node} (as far as the job says), if it may stand in for it at all. */
    private static Optional<NodeSpec> fitting(JobSpec spec, NodeSpec node) {
        if (node.name().equals(spec.rendezvous().master()) && spec.rendezvous().addr().isPresent()) {
            return Optional.empty(); // rendezvous.addr names the master's machine
        }
        OptionalInt workers = Planner.workersAhead(node);
        return spec.spares().stream().filter(s -> Planner.workersAhead(s).equals(workers)).findFirst();
    }

    /** "quarantined since S until U (MACHINE; run R of job J): REASON". */
    public static String describe(QuarantineFile.Entry e) {
        return "quarantined since " + e.since() + " until " + e.until() + " (" + e.machine() + "; run " + e.runId() + " of job " + e.job() + "): "
                + e.reason();
    }
}
