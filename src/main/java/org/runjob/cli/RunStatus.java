package org.runjob.cli;

import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.util.List;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.launch.StatusSink;
import org.runjob.logs.Coordinator;
import org.runjob.logs.RunFolder;
import org.runjob.report.StatusJson;

/** Keeps a run folder's {@code status.json} current, from preflight to the end of the run. */
final class RunStatus implements StatusSink {

    private static final Logger LOG = LogManager.getLogger(RunStatus.class);

    private final RunFolder folder;
    private final String runId;
    private final String job;
    private final Clock clock;
    private final Coordinator coordinator = Coordinator.current();
    private final Instant started;
    private int attempt;
    private List<Rank> ranks = List.of();

    RunStatus(RunFolder folder, String runId, String job, Clock clock) {
        this.folder = folder;
        this.runId = runId;
        this.job = job;
        this.clock = clock;
        this.started = clock.instant();
    }

    @Override
    public synchronized void update(int attempt, boolean stopping, List<Rank> ranks) {
        this.attempt = attempt;
        this.ranks = List.copyOf(ranks);
        write(stopping ? "stopping" : "running");
    }

    /** Writes the state with the ranks last reported; a failure to write is logged, never fatal. */
    synchronized void write(String state) {
        try {
            folder.writeJson("status.json", StatusJson.of(runId, job, state, attempt, coordinator, started, clock.instant(), ranks));
        } catch (IOException e) {
            LOG.warn("cannot write {}: {}", folder.dir().resolve("status.json"), e.getMessage());
        }
    }
}
