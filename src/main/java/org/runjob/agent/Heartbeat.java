package org.runjob.agent;

import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * The agent's side of the heartbeat: a coordinator that sends no frame for the timeout is gone (a
 * dead link may never close the agent's stdin, a laptop may sleep), so the agent acts on its own.
 * Checked every 200 ms on a daemon thread, from START until the workers stop.
 */
final class Heartbeat {

    private Heartbeat() {
    }

    /**
     * @param lastFrame when the last frame came ({@link System#nanoTime})
     * @param done      true once the workers are stopping anyway: the watch ends
     * @param onSilence what to do, once, after {@code timeoutMs} without a frame
     */
    static void watch(long timeoutMs, LongSupplier lastFrame, BooleanSupplier done, Runnable onSilence) {
        Thread t = new Thread(() -> {
            while (!done.getAsBoolean()) {
                if (System.nanoTime() - lastFrame.getAsLong() > timeoutMs * 1_000_000) {
                    onSilence.run();
                    return;
                }
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "agent-heartbeat");
        t.setDaemon(true);
        t.start();
    }
}
