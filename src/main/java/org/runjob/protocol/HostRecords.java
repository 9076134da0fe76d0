package org.runjob.protocol;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * The record types a submitted run's coordinator and a node host exchange over a
 * {@link SecureLink}: one connection per program the coordinator starts on the node, as one SSH
 * exec channel would be.
 *
 * <ol>
 *   <li>The coordinator sends {@link #EXEC} (the argv, NUL-separated) or {@link #STOP} (the host
 *       ends: the run is over).</li>
 *   <li>The host answers {@link #STARTED} (the pid) or {@link #FAILED} (why).</li>
 *   <li>Then {@link #STDIN}, {@link #STDIN_EOF} and {@link #KILL} go to the node;
 *       {@link #STDOUT}, {@link #STDERR} and at last {@link #EXIT} (the status) come back.</li>
 *   <li>The connection closing lets go of the program: its stdin is closed, as sshd does when a
 *       channel drops.</li>
 * </ol>
 */
public final class HostRecords {

    public static final byte EXEC = 1;
    public static final byte STOP = 2;
    public static final byte STARTED = 3;
    public static final byte FAILED = 4;
    public static final byte STDIN = 5;
    public static final byte STDIN_EOF = 6;
    public static final byte KILL = 7;
    public static final byte STDOUT = 8;
    public static final byte STDERR = 9;
    public static final byte EXIT = 10;

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
