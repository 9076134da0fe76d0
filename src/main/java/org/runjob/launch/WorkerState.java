package org.runjob.launch;

/** A worker's state; changed only by the {@link Supervisor}. */
public enum WorkerState {
    STARTING, RUNNING, SUCCEEDED, FAILED, STOPPED, LOST;

    public boolean ended() {
        return this != STARTING && this != RUNNING;
    }

    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
