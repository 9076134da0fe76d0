package org.runjob.session;

import java.time.Instant;

import org.runjob.observe.Sources;
import org.runjob.protocol.Exit;

/** What agents report to the supervisor, in arrival order on one queue. */
public sealed interface Event {

    /** The node the event is about; empty for {@link Interrupted}. */
    default String node() {
        return "";
    }

    /** The agent's JVM runs and reads frames: a node is ready for START (preflight waited for the first one). */
    record Hello(String node) implements Event {
    }

    /** The answer to a preflight request: its record's bytes. */
    record Reply(String node, byte[] payload) implements Event {
    }

    /** The agent says why it acts on its own (it stopped its workers: no heartbeat). */
    record Notice(String node, String text) implements Event {
    }

    /** A failed worker's TORCHELASTIC_ERROR_FILE (JSON written by torch's {@code @record}). */
    record ErrorFile(String node, int rank, String json) implements Event {
    }

    /** Complete lines a worker appended to its RUNJOB_METRICS_FILE, and when its agent read them. */
    record Metrics(String node, int rank, Instant read, byte[] lines, long skippedBytes) implements Event {
    }

    /**
     * One sample of an observation source of the node (a JSON line): {@code gpus}, its GPUs or
     * why it has none, or a registered source ({@code org.runjob.observe.Source}).
     */
    record Sample(String node, String source, byte[] line) implements Event {
        /** True for the node's GPUs' own source. */
        public boolean gpus() {
            return source.equals(Sources.GPUS);
        }
    }

    /** A rank's answer to STACKS: the capture's id and the stacks' text. */
    record Stack(String node, int rank, String id, String text) implements Event {
    }

    record Started(String node, int rank, long pid) implements Event {
    }

    /** A chunk of the output file with this index (OUTPUTS); an empty chunk ends that file. */
    record OutputData(String node, int index, byte[] bytes) implements Event {
    }

    record Output(String node, int rank, boolean stderr, byte[] bytes) implements Event {
    }

    /** A worker's exit; {@code endedAtMillis} is when its program ended by its node's clock, 0 when not known. */
    record Exited(String node, int rank, Exit exit, long endedAtMillis) implements Event {

        static Exited of(String node, int rank, Exit.Report report) {
            return new Exited(node, rank, report.exit(), report.endedAtMillis());
        }
    }

    /** The agent finished cleanly: all its workers ended and nothing they started is left. */
    record AgentDone(String node) implements Event {
    }

    /** The channel to the agent ended without DONE. */
    record AgentLost(String node, String reason) implements Event {
    }

    /** A Ctrl-C, SIGTERM or SIGHUP reached runjob: a wake-up for the supervisor, which reads {@link Interrupts}. */
    record Interrupted() implements Event {
    }
}
