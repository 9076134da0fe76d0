package org.runjob.spec;

/**
 * The job file's {@code relay}: whether nodes pass the job's files on to each other instead of
 * each getting them from runjob. AUTO relays a node's files when it needs at least
 * {@link #AUTO_MIN_BYTES} and at least {@link #AUTO_MIN_NODES} nodes are remote.
 */
public enum Relay {
    AUTO, ALWAYS, NEVER;

    public static final long AUTO_MIN_BYTES = 8L << 20;
    public static final int AUTO_MIN_NODES = 3;

    /** Whether a node that lacks {@code neededBytes} gets them through the relay plan, in a job with {@code remoteNodes} remote nodes. */
    public boolean relays(long neededBytes, int remoteNodes) {
        return switch (this) {
            case NEVER -> false;
            case ALWAYS -> neededBytes > 0 && remoteNodes >= 2;
            case AUTO -> neededBytes >= AUTO_MIN_BYTES && remoteNodes >= AUTO_MIN_NODES;
        };
    }
}
