package org.runjob.testbed;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import org.opentest4j.AssertionFailedError;

/** Waits for a condition with a deadline, checking every 20 ms: the tests' only way to wait. */
public final class Poll {

    private Poll() {
    }

    public static void until(BooleanSupplier condition, Duration timeout, String what) {
        until(condition, timeout, what, () -> "");
    }

    /** The same; a timeout's message ends with {@code seen}'s account of what was there instead. */
    public static void until(BooleanSupplier condition, Duration timeout, String what, Supplier<String> seen) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                String instead = seen.get();
                throw new AssertionFailedError("timed out after " + timeout.toMillis() + " ms waiting for " + what
                        + (instead.isEmpty() ? "" : "; seen instead:\n" + instead));
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionFailedError("interrupted waiting for " + what);
            }
        }
    }
}
