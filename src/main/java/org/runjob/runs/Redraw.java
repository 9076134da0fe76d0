package org.runjob.runs;

import java.util.function.Consumer;

import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.Jobs;

/**
 * A run's view shown again every few seconds until the run ends or Ctrl-C ({@code status --watch},
 * {@code top}): in place on a terminal (cursor home, screen cleared), one view after another,
 * a blank line between, elsewhere.
 */
public final class Redraw {

    /** Cursor home and clear screen. */
    private static final String CLEAR = "\u001b[H\u001b[2J";

    private Redraw() {
    }

    /** Shows {@code r} every {@code seconds} s, read again each time, until it ends (OK) or Ctrl-C (INTERRUPTED). */
    public static int until(Io io, RunRecords.Run r, int seconds, Consumer<RunRecords.Run> show) throws InterruptedException {
        RunRecords.Run run = r;
        while (true) {
            if (io.terminal()) {
                io.out().print(CLEAR);
            }
            show.accept(run);
            io.out().flush();
            if (!run.live()) {
                return ExitCode.OK;
            }
            if (Jobs.pauseUnlessInterrupted(io, seconds * 1000L)) {
                return ExitCode.INTERRUPTED;
            }
            run = RunRecords.read(run.folder(), io.env());
            if (!io.terminal()) {
                io.out().println();
            }
        }
    }
}
