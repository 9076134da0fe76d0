package org.runjob.session;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts Ctrl-C / SIGTERM / SIGHUP / SIGUSR1 requests (SIGUSR1: Slurm's time-limit warning, whose
 * reason the report names). The first asks for a graceful stop of every worker, the
 * second for an immediate kill. {@link #installed()} hooks SIGINT, SIGTERM and SIGHUP (the terminal
 * was closed) so the JVM does not exit on them: the supervisor decides when to exit, after the
 * workers are gone, with the report, summary.json and exit code 130.
 */
public final class Interrupts {

    /** What SIGUSR1 means: Slurm sends it to a submitted run's batch step before its time limit. */
    public static final String TIME_LIMIT = "time limit: Slurm's warning before the job's time limit (SIGUSR1)";

    private final AtomicInteger count = new AtomicInteger();
    private volatile Runnable listener = () -> { };
    private volatile String reason;

    /** Interrupts nobody raises but {@link #raise()} (tests, subcommands that launch nothing). */
    public static Interrupts none() {
        return new Interrupts();
    }

    /** Interrupts raised by this process's SIGINT, SIGTERM and SIGHUP. */
    @SuppressWarnings("sunapi")
    public static Interrupts installed() {
        Interrupts interrupts = new Interrupts();
        for (String name : new String[] {"INT", "TERM", "HUP", "USR1"}) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(name), s -> interrupts.raise(name.equals("USR1") ? TIME_LIMIT : null));
            } catch (IllegalArgumentException e) {
                // the signal is reserved here (e.g. -Xrs): keep the JVM's default behaviour
            }
        }
        return interrupts;
    }

    public void raise() {
        raise(null);
    }

    /** @param why what the first interrupt was, when it was more than a Ctrl-C (the time limit); null: a plain interrupt */
    public void raise(String why) {
        if (count.get() == 0 && why != null) {
            reason = why;
        }
        count.incrementAndGet();
        listener.run();
    }

    /** What the first interrupt was, when it said. */
    public Optional<String> reason() {
        return Optional.ofNullable(reason);
    }

    public int count() {
        return count.get();
    }

    /** Called (on the signal's thread) after every raise. */
    public void onRaise(Runnable listener) {
        this.listener = listener;
    }
}
