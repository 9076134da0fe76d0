package org.runjob.serve;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

import org.runjob.run.Io;
import org.runjob.run.RunIndex;
import org.runjob.runs.RunRecords;
import org.runjob.runs.SubmittedRuns;

/**
 * The runs the page shows, found as {@code runjob runs} finds them (under the logs dir and, without
 * {@code --logs-dir}, in the run index; a folder not to be believed is left out and named), and a
 * run by its exact id: a URL names a run, never a path. Submitted runs are asked on their master
 * nodes at most every {@value #SUBMITTED_MS} ms, on a thread of their own, so a slow node never
 * holds the page.
 */
final class RunCatalog {

    static final long SUBMITTED_MS = 10_000;
    /** What a run id looks like: anything else in a URL names no run. */
    static final Pattern RUN_ID = Pattern.compile("[0-9A-Za-z][0-9A-Za-z._-]{0,127}");

    private final Io io;
    private final Path logsDir;
    private final boolean index;
    private volatile List<RunRecords.Run> submitted = List.of();
    private volatile long submittedAt;
    private volatile boolean asking;

    /** @param index whether the run index is read too (no {@code --logs-dir}) */
    RunCatalog(Io io, Path logsDir, boolean index) {
        this.io = io;
        this.logsDir = logsDir;
        this.index = index;
    }

    /** This machine's runs, oldest first, and why each folder left out was. */
    Local local() throws IOException {
        List<String> left = new ArrayList<>();
        List<RunRecords.Run> runs = RunRecords.everywhere(logsDir, index, io.env(), left::add);
        return new Local(runs, left);
    }

    record Local(List<RunRecords.Run> runs, List<String> leftOut) {
    }

    /** The submitted runs as last asked; asks again in the background when that was {@value #SUBMITTED_MS} ms ago. */
    List<RunRecords.Run> submitted() {
        List<RunIndex.Entry> entries = entries();
        if (entries.isEmpty()) {
            return List.of();
        }
        synchronized (this) {
            if (!asking && System.nanoTime() - submittedAt > SUBMITTED_MS * 1_000_000L) {
                asking = true;
                Thread t = new Thread(() -> {
                    try {
                        submitted = SubmittedRuns.list(io, entries);
                    } finally {
                        submittedAt = System.nanoTime();
                        asking = false;
                    }
                }, "serve-submitted");
                t.setDaemon(true);
                t.start();
            }
        }
        if (submitted.isEmpty()) {
            // not asked yet: each as the index knows it
            return entries.stream().map(e -> new RunRecords.Run(Path.of(e.node().orElse("") + ":" + e.folder()), e.job(), e.runId(),
                    "submitted to " + e.node().orElse("?"), Optional.empty(), Optional.of(e.started()), Optional.empty(), Optional.empty(),
                    Optional.empty(), Optional.empty(), Optional.empty())).toList();
        }
        return submitted;
    }

    private List<RunIndex.Entry> entries() {
        return index ? RunIndex.list(io.env()).stream().filter(RunIndex.Entry::isSubmitted).toList() : List.of();
    }

    /** The run as its folder shows it now (a queued run's scheduler asked with this process's environment, as runs asks it). */
    RunRecords.Run reread(RunRecords.Run run) {
        return RunRecords.read(run.folder(), io.env());
    }

    /** A run found by id: its folder here, or a submitted run's index entry. */
    sealed interface Found permits Here, Submitted {
    }

    record Here(RunRecords.Run run) implements Found {
    }

    record Submitted(RunIndex.Entry entry) implements Found {
    }

    /** The run whose id is exactly {@code id}; empty for none, or for text that is no run id. */
    Optional<Found> find(String id) throws IOException {
        if (!RUN_ID.matcher(id).matches()) {
            return Optional.empty();
        }
        for (RunRecords.Run r : local().runs()) {
            if (r.runId().equals(id)) {
                return Optional.of(new Here(r));
            }
        }
        return entries().stream().filter(e -> e.runId().equals(id)).findFirst().map(Submitted::new);
    }
}
