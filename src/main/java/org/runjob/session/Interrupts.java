package org.runjob.session;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Counts Ctrl-C / SIGTERM / SIGHUP / SIGUSR1 requests (SIGUSR1: Slurm's time-limit warning, whose
 * reason the report names). The first asks for a graceful stop of every worker, the
 * second for an immediate kill. {@link #installed()} hooks SIGINT, SIGTERM and SIGHUP (the terminal
 * was closed) so the JVM does not exit on them: the supervisor decides when to exit, after the
 * workers are gone, with the report, summary.json and exit code 130. A first interrupt that says
 * nothing of itself (a scheduler's SIGTERM) may be explained: {@link #explainedBy} is asked at
 * once, on a thread of its own, and {@link #explained} waits a little for its answer.
 */
public final class Interrupts {

    /** What SIGUSR1 means: Slurm sends it to a submitted run's batch step before its time limit. */
    public static final String TIME_LIMIT = "time limit: Slurm's warning before the job's time limit (SIGUSR1)";

    private final AtomicInteger count = new AtomicInteger();
    private volatile Runnable listener = () -> { };
    private volatile String reason;
    private volatile Supplier<Optional<String>> explainer;
    private final CompletableFuture<Optional<String>> explanation = new CompletableFuture<>();
    private volatile boolean asked;

    /** How long {@link #explained} waits for the explainer's answer. */
    static final long EXPLAIN_WAIT_MS = 3000;

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
        Supplier<Optional<String>> ask = explainer;
        if (count.getAndIncrement() == 0 && why == null && ask != null) {
            asked = true;
            Thread t = new Thread(() -> {
                try {
                    explanation.complete(ask.get());
                } catch (RuntimeException e) {
                    explanation.complete(Optional.empty());
                }
            }, "interrupt-explainer");
            t.setDaemon(true);
            t.start();
        }
        listener.run();
    }

    /** What the first interrupt was, when it said. */
    public Optional<String> reason() {
        return Optional.ofNullable(reason);
    }

    /**
     * Who to ask why, when the first interrupt comes without a reason: runjob as a scheduler's
     * batch step, whose SIGTERM may be a requeue, a node failure or a cancel. It may act on what
     * it finds (quarantine a failed node) before it answers.
     */
    public void explainedBy(Supplier<Optional<String>> explainer) {
        this.explainer = explainer;
    }

    /** {@link #reason}, or what the explainer found, waited for up to {@link #EXPLAIN_WAIT_MS}. */
    public Optional<String> explained() {
        if (reason != null || !asked) {
            return reason();
        }
        try {
            return explanation.get(EXPLAIN_WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    public int count() {
        return count.get();
    }

    /** Called (on the signal's thread) after every raise. */
    public void onRaise(Runnable listener) {
        this.listener = listener;
    }
}
