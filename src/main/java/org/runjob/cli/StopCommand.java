package org.runjob.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;

import org.runjob.logs.Coordinator;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.runs.QueuedRun;
import org.runjob.runs.RunRecords;
import org.runjob.runs.SweepRecord;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code runjob stop RUN [--now]}: what Ctrl-C does to a run in the foreground, to a run anywhere
 * on this machine: SIGTERM to its runjob (found by pid and start time, and checked to be runjob
 * holding that run's log open: {@link Coordinator#notRunOf}), which stops every worker
 * (SIGTERM, grace, SIGKILL), reports and exits 130; {@code --now} kills at once, as a second
 * Ctrl-C does. Waits for the run's summary.json and prints how it ended. {@code stop SWEEP}
 * (an id {@code sweep-...}, or a unique prefix) stops a sweep's runjob and every run of it.
 */
@Command(name = "stop", mixinStandardHelpOptions = true, description = "Stop a run as Ctrl-C would (--now: kill at once); waits until it has ended. A sweep's id stops the sweep: no more of its runs start, and every one running stops.")
final class StopCommand implements Callable<Integer> {

    private final Io io;

    @Parameters(index = "0", paramLabel = "RUN", description = "A run id, a unique prefix of one, last, a run folder, or a sweep's id (sweep-...).")
    String run;

    @Option(names = "--now", description = "Kill every worker at once instead of after the grace period.")
    boolean now;

    @Option(names = "--wait", paramLabel = "SECONDS", defaultValue = "120", description = "How long to wait for the run to end (default: ${DEFAULT-VALUE}).")
    int waitSeconds;

    @Mixin
    RunsOptions options;

    @Spec
    CommandSpec spec;

    StopCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() throws Exception {
        if (run.startsWith(SweepRecord.PREFIX)) {
            return stopSweep();
        }
        var found = options.find(io, run);
        if (found.isEmpty()) {
            return ExitCode.INVALID;
        }
        if (found.get() instanceof RunsOptions.Submitted s) {
            return Forward.call(io, spec, s.entry());
        }
        RunRecords.Run r = ((RunsOptions.Here) found.get()).run();
        if (QueuedRun.of(r.folder()).isPresent() && r.live()) {
            return cancel(r) ? awaitEnd(r) : ExitCode.PREFLIGHT_FAILED;
        }
        if (!r.live() || r.coordinator().isEmpty()) {
            io.err().println("runjob: run " + r.runId() + " is not running (" + r.state() + ")");
            return ExitCode.OK;
        }
        int signalled = signal(r);
        return signalled == ExitCode.OK ? awaitEnd(r) : signalled == NOT_RUNNING ? ExitCode.OK : signalled;
    }

    /**
     * Stops a queued run through its scheduler, which reaches its runjob wherever it runs: SIGTERM
     * to the batch step (its Ctrl-C path), or the job cancelled (pending, or --now). False after
     * saying why the scheduler refused.
     */
    private boolean cancel(RunRecords.Run r) {
        var queued = QueuedRun.of(r.folder()).orElseThrow();
        var complaint = queued.getKey().queue().map(q -> q.cancel(queued.getValue(), now, io.env()))
                .orElse(Optional.of("backend " + queued.getKey().name() + " has no batch queue"));
        complaint.ifPresent(c -> io.err().println("runjob: cannot stop run " + r.runId() + " (" + queued.getKey().name() + " job "
                + queued.getValue() + "): " + c));
        return complaint.isEmpty();
    }

    /** What {@link #signal} returns for a run that was not running (said on stderr): nothing to wait for. */
    private static final int NOT_RUNNING = -1;

    /** Signals a live run's runjob as Ctrl-C (twice with --now); OK, {@link #NOT_RUNNING}, or an exit code after saying why not. */
    private int signal(RunRecords.Run r) throws InterruptedException {
        Coordinator c = r.coordinator().get();
        if (!c.host().equals(Coordinator.current().host())) {
            io.err().println("runjob: run " + r.runId() + " runs on " + c.host() + ": stop it there");
            return ExitCode.INVALID;
        }
        ProcessHandle handle = ProcessHandle.of(c.pid()).orElse(null);
        if (handle == null || !c.alive()) {
            io.err().println("runjob: run " + r.runId() + " is not running (its runjob is gone)");
            return NOT_RUNNING;
        }
        var notOurs = c.notRunOf(r.folder());
        if (notOurs.isPresent()) {
            io.err().println("runjob: run " + r.runId() + ": its status.json names pid " + c.pid() + ", which is not this run's runjob ("
                    + notOurs.get() + "): nothing was signalled");
            return ExitCode.INVALID;
        }
        handle.destroy();
        if (now) {
            Thread.sleep(200);
            handle.destroy(); // a second interrupt: KILL now
        }
        return ExitCode.OK;
    }

    /**
     * {@code stop SWEEP}: the sweep's own runjob first (as Ctrl-C: it starts no more runs and stops
     * those it started), then every run of the sweep still running, then waits for them all.
     */
    private int stopSweep() throws IOException, InterruptedException {
        List<RunRecords.Run> all = options.local(io);
        Map<String, List<RunRecords.Run>> bySweep = new TreeMap<>();
        Map<String, SweepRecord> records = new HashMap<>();
        for (RunRecords.Run r : all) {
            SweepRecord.read(r.folder()).filter(w -> w.sweep().startsWith(run)).ifPresent(w -> {
                bySweep.computeIfAbsent(w.sweep(), k -> new ArrayList<>()).add(r);
                records.putIfAbsent(w.sweep(), w);
            });
        }
        if (bySweep.size() != 1) {
            io.err().println("runjob: " + (bySweep.isEmpty() ? "no sweep " + run + " (runjob runs lists sweeps above their runs)"
                    : run + " names " + bySweep.size() + " sweeps: " + String.join(", ", bySweep.keySet()) + "; give more of the id"));
            return ExitCode.INVALID;
        }
        String id = bySweep.keySet().iterator().next();
        Coordinator sweepRunjob = records.get(id).runjob();
        // the sweep's runjob holds its first run's sweep.json open while it runs: the proof that the record names it
        Optional<Path> first = bySweep.get(id).stream().filter(r -> SweepRecord.read(r.folder()).map(w -> w.point() == 0).orElse(false))
                .map(r -> r.folder().resolve(SweepRecord.FILE)).findFirst();
        Optional<String> notOurs = first.isEmpty() ? Optional.of("its first run's folder is gone")
                : sweepRunjob.holdsOpen(first.get(), "the sweep's " + first.get());
        if (sweepRunjob.alive() && notOurs.isPresent()) {
            io.err().println("runjob: " + id + ": its sweep.json names pid " + sweepRunjob.pid() + ", which is not the sweep's runjob ("
                    + notOurs.get() + "): it was not signalled; its runs are stopped one by one");
        }
        if (notOurs.isEmpty()) {
            ProcessHandle.of(sweepRunjob.pid()).ifPresent(ProcessHandle::destroy);
            io.err().println("runjob: " + id + ": its runjob (pid " + sweepRunjob.pid() + ") starts no more runs and stops its own");
            if (now) {
                // its runjob stops its runs gracefully: --now kills their workers at once, as for one run
                for (RunRecords.Run r : bySweep.get(id)) {
                    RunRecords.Run current = RunRecords.read(r.folder(), io.env());
                    if (current.live() && current.coordinator().isPresent()) {
                        signal(current);
                    }
                }
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(waitSeconds).toNanos();
            while (sweepRunjob.alive() && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
        }
        Set<String> signalled = new HashSet<>();
        // a sweep queued as one job array: one cancel of the array reaches every task, waiting or running
        Map<String, List<RunRecords.Run>> byArray = new TreeMap<>();
        for (RunRecords.Run r : bySweep.get(id)) {
            QueuedRun.arrayOf(r.folder()).ifPresent(a -> byArray.computeIfAbsent(a.getValue(), k -> new ArrayList<>()).add(r));
        }
        for (var array : byArray.entrySet()) {
            var backend = QueuedRun.arrayOf(array.getValue().get(0).folder()).orElseThrow().getKey();
            var complaint = backend.queue().map(q -> q.cancelArray(array.getKey(), now, io.env()))
                    .orElse(Optional.of("backend " + backend.name() + " has no batch queue"));
            complaint.ifPresent(c -> io.err().println("runjob: cannot stop " + backend.name() + " job array " + array.getKey() + ": " + c));
            if (complaint.isEmpty()) {
                array.getValue().forEach(r -> signalled.add(r.runId()));
            }
        }
        for (RunRecords.Run r : bySweep.get(id)) {
            RunRecords.Run current = RunRecords.read(r.folder(), io.env());
            boolean queued = QueuedRun.of(current.folder()).isPresent();
            if (!signalled.contains(r.runId()) && current.live()
                    && (queued ? cancel(current) : current.coordinator().isPresent() && signal(current) == ExitCode.OK)) {
                signalled.add(r.runId());
            }
        }
        int code = ExitCode.OK;
        for (RunRecords.Run r : bySweep.get(id)) {
            code = Math.max(code, signalled.contains(r.runId()) ? awaitEnd(r) : report(RunRecords.read(r.folder(), io.env())));
        }
        return code;
    }

    /** Says how {@code run} (as just read) stands: its state and exit code. */
    private int report(RunRecords.Run run) {
        io.err().println("runjob: run " + run.runId() + " " + run.state() + run.exitCode().map(e -> " (exit " + e + ")").orElse(""));
        return ExitCode.OK;
    }

    /** Waits up to --wait for the run to end, and says how it ended. */
    private int awaitEnd(RunRecords.Run r) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(waitSeconds).toNanos();
        while (RunRecords.read(r.folder(), io.env()).live() && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        RunRecords.Run after = RunRecords.read(r.folder(), io.env());
        if (after.live()) {
            io.err().println("runjob: run " + r.runId() + " is still " + after.state() + " after " + waitSeconds + " s; runjob stop --now "
                    + r.runId() + " kills its workers at once");
            return ExitCode.WORKER_FAILED;
        }
        return report(after);
    }
}
