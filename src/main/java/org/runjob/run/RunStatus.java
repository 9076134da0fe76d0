package org.runjob.run;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.OptionalInt;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.json.Json;
import org.runjob.launch.StatusSink;
import org.runjob.logs.Coordinator;
import org.runjob.logs.RunFolder;
import org.runjob.report.StatusJson;

import tools.jackson.core.JacksonException;

/** Keeps a run folder's {@code status.json} current, from preflight to the end of the run. */
public final class RunStatus implements StatusSink {

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
        write(stopping ? RunState.STOPPING : RunState.RUNNING);
    }

    /** Writes the state with the ranks last reported; a failure to write is logged, never fatal. */
    synchronized void write(RunState state) {
        try {
            folder.writeJson("status.json", StatusJson.of(runId, job, state.label(), attempt, coordinator, started, clock.instant(), ranks));
        } catch (IOException e) {
            LOG.warn("cannot write {}: {}", folder.dir().resolve("status.json"), e.getMessage());
        }
    }

    /**
     * Readies {@code folder} for the run's next attempt ({@code runjob resume}, a requeued batch job):
     * the attempt after the last one its {@code status.json} records (1 when that cannot be read),
     * its {@code summary.json} kept as {@code summary.until-attempt-N.json}. Empty when the folder
     * records no attempt: nothing is moved.
     */
    public static OptionalInt nextAttempt(Path folder) throws IOException {
        Path status = folder.resolve("status.json");
        if (!Files.isRegularFile(status)) {
            return OptionalInt.empty();
        }
        int last;
        try {
            last = Json.read(status).path("attempt").asInt(0);
        } catch (JacksonException e) {
            last = 0;
        }
        Path summary = folder.resolve("summary.json");
        if (Files.isRegularFile(summary)) {
            Files.move(summary, folder.resolve("summary.until-attempt-" + last + ".json"), StandardCopyOption.REPLACE_EXISTING);
        }
        return OptionalInt.of(last + 1);
    }
}
