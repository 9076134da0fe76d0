package org.runjob.distribute;

import java.util.Optional;

/**
 * What shipping to one node did: bytes and files sent, and those already there unchanged (kept: equal
 * size and modification time, or else equal SHA-256); {@code relayedBy} names the node that sent them
 * when it was not runjob itself (relay distribution).
 */
public record Shipped(long bytesSent, long bytesUnchanged, int filesSent, int filesUnchanged, Optional<String> relayedBy) {

    public static final Shipped NOTHING = new Shipped(0, 0, 0, 0, Optional.empty());

    /** "2 sent (16 MiB), 1 kept", "1 sent (100 MiB) by h1, 0 kept", or "ok" when there was nothing to ship. */
    public String summary() {
        if (filesSent == 0 && filesUnchanged == 0) {
            return "ok";
        }
        String size = bytesSent >= 1 << 20 ? (bytesSent >> 20) + " MiB" : bytesSent >= 1024 ? (bytesSent >> 10) + " KiB" : bytesSent + " B";
        return filesSent + " sent (" + size + ")" + relayedBy.map(n -> " by " + n).orElse("") + ", " + filesUnchanged + " kept";
    }
}
