package org.runjob.launch;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import org.runjob.spec.JobSpec;

/**
 * What a failed attempt means and what follows it, decided from the attempt's facts alone: no
 * clock, no network, no process. {@link Launcher} gathers the facts (the attempt's result, the
 * backend's word on its nodes, each such node's answer on a connection of its own, tried as soon
 * as its agent was suspected) and carries the decisions out.
 *
 * <ol>
 *   <li>An attempt that succeeded, or was interrupted, ends the run.</li>
 *   <li>An attempt whose nodes the backend took away (a cancelled Slurm job) ends the run; its nodes
 *       are not judged: the backend, not the machines, ended it.</li>
 *   <li>A node whose agent failed (its channel broke, it went silent, it exited) is <em>lost</em>
 *       only when a fresh connection to it fails too: evidence about the machine. A node that
 *       answers afresh was not lost; the next attempt runs there, and it is never quarantined
 *       (runjob falling behind, a killed agent or a slow login elsewhere is no evidence).</li>
 *   <li>Two quick attempts that failed the same way are a crash loop ({@link CrashLoop}): the run ends.</li>
 *   <li>Otherwise the run restarts while {@code failure.max_restarts} allows.</li>
 *   <li>A node is quarantined only on evidence about it: lost as above, or a failed health check.</li>
 * </ol>
 */
final class RecoveryPolicy {

    private RecoveryPolicy() {
    }

    /** What follows an attempt. */
    sealed interface Next {
        /** The run ends here, as the attempt itself says: it succeeded, was interrupted, or used the last restart. */
        record End() implements Next {
        }

        /** The backend took the nodes away: the run ends, no node is judged. */
        record NodesGone(String why) implements Next {
        }

        /** The attempt failed as the one before it did: the run ends. */
        record CrashLoop(String why) implements Next {
        }

        /** Another attempt follows. */
        record Restart() implements Next {
        }
    }

    /**
     * What follows {@code result}.
     *
     * @param previous     the attempt before it, if any
     * @param lastAttempt  the highest attempt number {@code failure.max_restarts} allows
     * @param gone         the backend's word that the nodes are gone for good, asked after a failed attempt
     */
    static Next after(AttemptResult result, Optional<AttemptResult> previous, JobSpec.FailureSpec failure, int lastAttempt,
                      Optional<String> gone) {
        if (result.succeeded() || result.interrupted()) {
            return new Next.End();
        }
        if (gone.isPresent()) {
            return new Next.NodesGone(gone.get());
        }
        if (result.attempt() >= lastAttempt) {
            return new Next.End();
        }
        if (previous.isPresent()) {
            Optional<String> loop = org.runjob.launch.CrashLoop.between(previous.get(), result, failure);
            if (loop.isPresent()) {
                return new Next.CrashLoop(loop.get());
            }
        }
        return new Next.Restart();
    }

    /** What became of a node whose agent failed during an attempt. */
    sealed interface Fate {
        String node();

        /** It answered on a fresh connection: its agent failed, the machine did not. */
        record Answers(String node, String agentFailure) implements Fate {
        }

        /** A fresh connection failed too: the machine is lost, for {@code evidence}. */
        record Lost(String node, String agentFailure, String evidence) implements Fate {
            /** The reason the run records for the node. */
            String why() {
                return agentFailure + "; a fresh connection failed too: " + evidence;
            }
        }
    }

    /**
     * The fate of each node whose agent failed, in the order given.
     *
     * @param agentFailures each such node's reason, as the attempt recorded it
     * @param freshFailures why a fresh connection to the node failed, for the nodes where it did
     */
    static Map<String, Fate> fates(Map<String, String> agentFailures, Map<String, String> freshFailures) {
        Map<String, Fate> out = new LinkedHashMap<>();
        agentFailures.forEach((node, why) -> out.put(node, freshFailures.containsKey(node)
                ? new Fate.Lost(node, why, freshFailures.get(node)) : new Fate.Answers(node, why)));
        return out;
    }

    /** The lost nodes among {@code fates}, with why, in order: the ones a spare, a wait or fewer nodes must make up for. */
    static Map<String, String> lost(Map<String, Fate> fates) {
        Map<String, String> out = new LinkedHashMap<>();
        fates.values().forEach(f -> {
            if (f instanceof Fate.Lost l) {
                out.put(l.node(), l.why());
            }
        });
        return out;
    }

    /** Why {@code fate}'s node is quarantined; empty when nothing shows the machine is at fault. */
    static Optional<String> quarantine(Fate fate) {
        return fate instanceof Fate.Lost l ? Optional.of("lost: " + l.why()) : Optional.empty();
    }
}
