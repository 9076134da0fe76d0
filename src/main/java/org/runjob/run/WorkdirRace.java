package org.runjob.run;

import java.io.IOException;
import java.security.SecureRandom;
import java.util.Random;

import org.runjob.preflight.Cell;
import org.runjob.preflight.Check;
import org.runjob.preflight.NodeReport;
import org.runjob.preflight.Preflight;
import org.runjob.preflight.PreflightReport;

/**
 * Two runs that share fixed workdirs ({@code runs_share_workdir: true}) on several nodes, started
 * together, can each take the run lock of some nodes first and be refused on the others: both
 * would fail. A preflight refused only because workdirs are in use is therefore tried again, its
 * agents ended first (so its locks are free), after a random pause, up to {@value #TRIES} times in
 * all: of runs racing so, one gets every lock while the others wait. A run that holds a workdir
 * for long still refuses the later one, after those tries (a few seconds).
 */
final class WorkdirRace {

    static final int TRIES = 5;
    /** The pause before a try again: at least this, plus up to {@link #JITTER_MS} at random. */
    static final int PAUSE_MS = 200;
    static final int JITTER_MS = 1300;
    private static final Random RANDOM = new SecureRandom();

    private WorkdirRace() {
    }

    /** One preflight of the run: it starts every node's agent, which takes the workdir's run lock. */
    interface Attempt {
        Preflight.Outcome run() throws IOException;
    }

    static Preflight.Outcome preflight(Io io, Attempt attempt) throws IOException {
        for (int tried = 1; ; tried++) {
            Preflight.Outcome outcome = attempt.run();
            if (outcome.report().ok() || tried == TRIES || io.interrupts().count() > 0 || !onlyWorkdirsInUse(outcome.report())) {
                return outcome;
            }
            outcome.close();
            long pause = PAUSE_MS + RANDOM.nextInt(JITTER_MS);
            io.err().println("runjob: a workdir this run needs is held by another run; trying again in " + pause + " ms (" + tried + " of "
                    + (TRIES - 1) + ")");
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return attempt.run();
            }
        }
    }

    /** True when preflight failed, and every failure is a workdir some other run holds. */
    static boolean onlyWorkdirsInUse(PreflightReport report) {
        boolean any = false;
        for (NodeReport n : report.nodes()) {
            for (var e : n.cells().entrySet()) {
                if (e.getValue().status() == Cell.Status.FAIL) {
                    if (e.getKey() != Check.WORKDIR || !e.getValue().text().contains(" is in use by ")) {
                        return false;
                    }
                    any = true;
                }
            }
        }
        return any;
    }
}
