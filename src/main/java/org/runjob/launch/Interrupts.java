package org.runjob.launch;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts Ctrl-C / SIGTERM / SIGHUP requests. The first asks for a graceful stop of every worker, the
 * second for an immediate kill. {@link #installed()} hooks SIGINT, SIGTERM and SIGHUP (the terminal
 * was closed) so the JVM does not exit on them: the supervisor decides when to exit, after the
 * workers are gone, with the report, summary.json and exit code 130.
 */
public final class Interrupts {

    private final AtomicInteger count = new AtomicInteger();
    private volatile Runnable listener = () -> { };

    /** Interrupts nobody raises but {@link #raise()} (tests, subcommands that launch nothing). */
    public static Interrupts none() {
        return new Interrupts();
    }

    /** Interrupts raised by this process's SIGINT, SIGTERM and SIGHUP. */
    @SuppressWarnings("sunapi")
    public static Interrupts installed() {
        Interrupts interrupts = new Interrupts();
        for (String name : new String[] {"INT", "TERM", "HUP"}) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(name), s -> interrupts.raise());
            } catch (IllegalArgumentException e) {
                // the signal is reserved here (e.g. -Xrs): keep the JVM's default behaviour
            }
        }
        return interrupts;
    }

    public void raise() {
        count.incrementAndGet();
        listener.run();
    }

    public int count() {
        return count.get();
    }

    /** Called (on the signal's thread) after every raise. */
    public void onRaise(Runnable listener) {
        this.listener = listener;
    }
}
