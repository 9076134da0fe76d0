package org.runjob.session;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/** One daemon timer for the deadlines of agent starts: an action that ends what overran. */
final class Deadlines {

    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "node-deadlines");
        t.setDaemon(true);
        return t;
    });

    private Deadlines() {
    }

    static ScheduledFuture<?> after(long millis, Runnable action) {
        return TIMER.schedule(action, millis, TimeUnit.MILLISECONDS);
    }
}
