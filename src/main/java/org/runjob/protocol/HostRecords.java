package org.runjob.protocol;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The record types a submitted run's coordinator and a node host exchange over a
 * {@link SecureLink}: one connection per program the coordinator starts on the node, as one SSH
 * exec channel would be.
 *
 * <ol>
 *   <li>The coordinator sends {@link Type#EXEC} (the argv, NUL-separated), {@link Type#STOP} (the host
 *       ends: the run is over) or {@link Type#HOLD}: the host stays up for as long as a HOLD
 *       arrives on that connection at least every idle period (a spare that runs nothing yet stays
 *       usable for the whole run; a coordinator that died or lost power no longer holds it).</li>
 *   <li>The host answers {@link Type#STARTED} (the pid) or {@link Type#FAILED} (why).</li>
 *   <li>Then {@link Type#STDIN}, {@link Type#STDIN_EOF} and {@link Type#KILL} go to the node;
 *       {@link Type#STDOUT}, {@link Type#STDERR} and at last {@link Type#EXIT} (the status) come back.</li>
 *   <li>The connection closing lets go of the program: its stdin is closed, as sshd does when a
 *       channel drops.</li>
 * </ol>
 */
public final class HostRecords {

    /** A record's type: its first byte, as {@link Frame.Type} is a frame's. */
    public enum Type {
        EXEC(1), STOP(2), STARTED(3), FAILED(4), STDIN(5), STDIN_EOF(6), KILL(7), STDOUT(8), STDERR(9), EXIT(10), HOLD(11);

        public final byte code;

        Type(int code) {
            this.code = (byte) code;
        }

        /** The type of that first byte; empty for one no record has. */
        public static Optional<Type> of(byte code) {
            for (Type t : values()) {
                if (t.code == code) {
                    return Optional.of(t);
                }
            }
            return Optional.empty();
        }
    }

    /** The line a node host prints once it listens: this prefix and its port. */
    public static final String LISTENING = "RUNJOB-HOST ";

    private HostRecords() {
    }

    public static byte[] argv(List<String> argv) {
        return String.join("\0", argv).getBytes(StandardCharsets.UTF_8);
    }

    public static List<String> argv(byte[] payload) {
        return Arrays.asList(new String(payload, StandardCharsets.UTF_8).split("\0", -1));
    }
}
