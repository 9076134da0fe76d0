package org.runjob.node;

/** A node could not be reached, or a program could not be started there; the message says which and why. */
public class NodeException extends Exception {

    public NodeException(String message) {
        super(message);
    }

    public NodeException(String message, Throwable cause) {
        super(message, cause);
    }
}
