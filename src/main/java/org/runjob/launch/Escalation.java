package org.runjob.launch;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * How an attempt's stop escalates, on a clock given to it (so it is tested without sleeping):
 * <ol>
 *   <li>{@link #stop}: STOP goes to every agent (SIGTERM to each worker tree, SIGKILL after the
 *       grace period, done by the agents).</li>
 *   <li>Agents not finished {@value Supervisor#STOP_SLACK_MS} ms after the grace period: KILL
 *       ({@link #due} says {@link Step#KILL}); a second Ctrl-C asks for it at once ({@link #kill}).</li>
 *   <li>{@value Supervisor#KILL_SLACK_MS} ms after KILL: their channels are closed by force and
 *       their workers killed by pid ({@link Step#FORCE}).</li>
 * </ol>
 */
final class Escalation {

    /** What is due now. */
    enum Step { NONE, KILL, FORCE }

    private final LongSupplier nanos;
    private final long graceMillis;
    private long stopAt = -1;
    private long killAt = -1;
    private long forceAt = -1;

    /** @param nanos a monotonic clock in nanoseconds ({@code System::nanoTime}) */
    Escalation(LongSupplier nanos, long graceMillis) {
        this.nanos = nanos;
        this.graceMillis = graceMillis;
    }

    /** True when this call began the stop (send STOP); false when it had begun already. */
    boolean stop() {
        if (stopAt >= 0) {
            return false;
        }
        stopAt = nanos.getAsLong();
        killAt = stopAt + TimeUnit.MILLISECONDS.toNanos(graceMillis + Supervisor.STOP_SLACK_MS);
        return true;
    }

    /** True when this call began killing (send KILL); false when it had begun already. */
    boolean kill() {
        if (forceAt >= 0) {
            return false;
        }
        forceAt = nanos.getAsLong() + TimeUnit.MILLISECONDS.toNanos(Supervisor.KILL_SLACK_MS);
        return true;
    }

    boolean stopping() {
        return stopAt >= 0;
    }

    /** What the backstops call for now: KILL once the grace period and its slack are over, FORCE once KILL's slack is. */
    Step due() {
        long now = nanos.getAsLong();
        if (forceAt >= 0 && now > forceAt) {
            return Step.FORCE;
        }
        if (killAt >= 0 && now > killAt && forceAt < 0) {
            return Step.KILL;
        }
        return Step.NONE;
    }
}
