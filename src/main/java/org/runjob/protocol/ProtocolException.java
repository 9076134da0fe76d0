package org.runjob.protocol;

import java.io.IOException;

/** Bytes the other side sent that are no valid frame or payload: a bug or a version skew, never a broken link. */
public final class ProtocolException extends IOException {

    public ProtocolException(String message) {
        super(message);
    }
}
