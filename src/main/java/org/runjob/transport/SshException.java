package org.runjob.transport;

/** An SSH step failed; the message is for the user (no stack trace needed) and names the node. */
public final class SshException extends Exception {
    public SshException(String message, Throwable cause) {
        super(message, cause);
    }

    public SshException(String message) {
        super(message);
    }
}
