package org.runjob.run;

import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

import org.runjob.launch.Quarantine;
import org.runjob.node.Cluster;
import org.runjob.node.SchedulerStop;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;

/**
 * A queued run's coordinator sent SIGTERM by its scheduler (its batch step is being ended): the
 * scheduler is asked why ({@link Cluster#stoppedBy}), which becomes the attempt's
 * {@code interrupted_by}. Where the scheduler picks the nodes (given as a count), a node the job lost
 * is quarantined with that cause, and a requeued job is kept off every quarantined node
 * ({@link Cluster#keepOff}), so its next start, the run's next attempt, runs elsewhere; both go to
 * {@code events.jsonl} and to the scheduler's output. Nodes the job file names are its to choose:
 * they are not quarantined here, and the requeued job asks for them again.
 */
final class SchedulerStops {

    private SchedulerStops() {
    }

    /**
     * What {@link org.runjob.session.Interrupts#explainedBy} asks, for the run of {@code spec} whose
     * folder is {@code folder}; {@code counted}: the job file gave its nodes as a count.
     */
    static Supplier<Optional<String>> explainer(Io io, Cluster cluster, JobSpec spec, boolean counted, Quarantine quarantine, Path folder) {
        return () -> {
            Optional<SchedulerStop> stop = cluster.stoppedBy();
            if (stop.isEmpty()) {
                return Optional.empty();
            }
            String why = stop.get().why();
            io.err().println("runjob: " + why);
            if (!counted) {
                return Optional.of(why);
            }
            EventsFile events = new EventsFile(folder, io.clock());
            for (String machine : stop.get().lostMachines()) {
                for (NodeSpec node : spec.nodes()) {
                    if (node.address().machine().equals(Optional.of(machine)) && quarantine.add(node, "lost: " + why)) {
                        events.quarantined(node.name(), "lost: " + why);
                    }
                }
            }
            if (stop.get().requeued()) {
                Set<String> avoid = Quarantined.machines(io, spec);
                if (!avoid.isEmpty()) {
                    Optional<String> problem = cluster.keepOff(avoid);
                    events.keptOff(avoid, problem);
                    io.err().println("runjob: " + problem.map(p -> "cannot keep the requeued job off " + String.join(", ", avoid) + ": " + p)
                            .orElse("the requeued job keeps off " + String.join(", ", avoid) + " (quarantined)"));
                }
            }
            return Optional.of(why);
        };
    }
}
