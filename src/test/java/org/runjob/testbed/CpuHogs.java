package org.runjob.testbed;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Real load for a test that must hold on a busy machine: {@code n} busy-looping processes, each
 * as runnable as any other (a load average of about {@code n}), killed on {@link #close}.
 */
public final class CpuHogs implements AutoCloseable {

    private final List<Process> hogs = new ArrayList<>();

    private CpuHogs() {
    }

    /** Starts {@code n} hogs. */
    public static CpuHogs start(int n) throws IOException {
        CpuHogs h = new CpuHogs();
        try {
            for (int i = 0; i < n; i++) {
                h.hogs.add(new ProcessBuilder("python3", "-c", "while True: pass").start());
            }
        } catch (IOException e) {
            h.close();
            throw e;
        }
        return h;
    }

    @Override
    public void close() {
        hogs.forEach(Process::destroyForcibly);
        for (Process p : hogs) {
            try {
                p.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
