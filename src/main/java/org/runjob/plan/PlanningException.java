package org.runjob.plan;

/** A valid job that cannot be planned with the facts at hand (e.g. {@code gpus: all} before the GPUs are probed). */
public final class PlanningException extends Exception {
    public PlanningException(String message) {
        super(message);
    }
}
