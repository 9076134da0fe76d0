package org.runjob.protocol;

import java.util.Objects;

/**
 * A compute process the driver lists on a GPU (NVML's running compute processes): its pid, the
 * user who owns it and its command line (from {@code /proc}; {@code ?} when {@code /proc} does not
 * say, as under {@code hidepid}), and the GPU memory it holds in MiB, or -1 when the driver does
 * not say.
 */
public record GpuProcess(long pid, String user, String command, long usedMib) {

    public GpuProcess {
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(command, "command");
    }

    /** "alice: python train.py (pid 4242, 812 MiB)", its texts made printable. */
    public String text() {
        return Printable.line(user) + ": " + Printable.line(command) + " (pid " + pid + (usedMib >= 0 ? ", " + usedMib + " MiB" : "") + ")";
    }
}
