package org.runjob.testbed;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;

/**
 * What some tests need from the machine (root, sshd, PyTorch). Missing pieces skip a test with a
 * loud message, except where RUNJOB_REQUIRE_TESTBED is set (CI): there a missing piece fails it.
 */
public final class Testbed {

    public static final String REQUIRE = "RUNJOB_REQUIRE_TESTBED";

    private Testbed() {
    }

    public static void require(boolean available, String what) {
        if (available) {
            return;
        }
        String message = "needs " + what;
        if (System.getenv(REQUIRE) != null) {
            fail(message + " (" + REQUIRE + " is set, so this is a failure, not a skip)");
        }
        System.err.println("SKIPPED: " + message);
        Assumptions.abort(message);
    }

    /** True when {@code argv} runs and exits 0 within 60 s. */
    public static boolean runs(String... argv) {
        try {
            Process p = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
