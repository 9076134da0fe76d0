package org.runjob.launch;

import java.util.Locale;
import java.util.Set;

/**
 * A worker's state in one attempt; changed only by the {@link Supervisor}, along
 * {@link #canBecome}:
 * <ol>
 *   <li>{@code STARTING} → {@code RUNNING} when its agent reports STARTED.</li>
 *   <li>{@code STARTING} or {@code RUNNING} → {@code SUCCEEDED} (exit 0), {@code FAILED} (any other
 *       exit, a signal it did not get from runjob, or it could not start), {@code STOPPED} (ended by
 *       runjob's stop after another rank failed or Ctrl-C; or never started because the attempt
 *       stopped first), or {@code LOST} (its node's agent ended, went silent, or stopped it on its
 *       own).</li>
 *   <li>The last four are final.</li>
 * </ol>
 */
public enum WorkerState {
    STARTING, RUNNING, SUCCEEDED, FAILED, STOPPED, LOST;

    public boolean ended() {
        return this != STARTING && this != RUNNING;
    }

    /** Whether the supervisor may move a worker from this state to {@code next}. */
    public boolean canBecome(WorkerState next) {
        return switch (this) {
            case STARTING -> next != STARTING;
            case RUNNING -> Set.of(SUCCEEDED, FAILED, STOPPED, LOST).contains(next);
            default -> false;
        };
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
