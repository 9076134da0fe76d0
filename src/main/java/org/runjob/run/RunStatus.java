package org.runjob.run;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

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
            folder.writeJson(RunFolder.STATUS, StatusJson.of(runId, job, state.label(), attempt, coordinator, started, clock.instant(), ranks));
        } catch (IOException e) {
            LOG.warn("cannot write {}: {}", folder.dir().resolve(RunFolder.STATUS), e.getMessage());
        }
    }

    /** The attempt the run starts with, for what status.json says before the first attempt's start (0 for a new run). */
    synchronized void startsAt(int first) {
        this.attempt = first;
    }

    private static final Pattern ATTEMPT_START = Pattern.compile("\"event\"\\s*:\\s*\"attempt_start\"");
    private static final Pattern ATTEMPT = Pattern.compile("\"attempt\"\\s*:\\s*(\\d+)");
    private static final Pattern KEPT = Pattern.compile("summary\\.until-attempt-(\\d+)(\\.\\d+)?\\.json");

    /**
     * Readies {@code folder} for the run's next attempt ({@code runjob resume}, a requeued batch job):
     * the attempt after the highest one the folder records anywhere: {@code status.json}, the
     * {@code attempt_start} lines of {@code events.jsonl}, and the summaries kept before (1 when
     * none can be read). A start that ended in preflight, before its attempt began, rewrote
     * status.json, so status.json alone could give the same number twice and an attempt's logs
     * would be overwritten. Its {@code summary.json} is kept as {@code summary.until-attempt-N.json}
     * (never over an earlier one). Empty when the folder records no attempt: nothing is moved.
     */
    public static OptionalInt nextAttempt(Path folder) throws IOException {
        Path status = folder.resolve(RunFolder.STATUS);
        if (!Files.isRegularFile(status)) {
            return OptionalInt.empty();
        }
        int last;
        try {
            last = Json.read(status).path("attempt").asInt(0);
        } catch (JacksonException e) {
            last = 0;
        }
        Path events = folder.resolve("events.jsonl");
        if (Files.isRegularFile(events, LinkOption.NOFOLLOW_LINKS)) {
            try (Stream<String> lines = Files.lines(events)) {
                last = Math.max(last, lines.filter(l -> ATTEMPT_START.matcher(l).find()).map(ATTEMPT::matcher).filter(Matcher::find)
                        .mapToInt(m -> Integer.parseInt(m.group(1))).max().orElse(0));
            } catch (UncheckedIOException | NumberFormatException e) {
                // a cut or odd line: the other records still count
            }
        }
        try (Stream<Path> files = Files.list(folder)) {
            last = Math.max(last, files.map(f -> KEPT.matcher(f.getFileName().toString())).filter(Matcher::matches)
                    .mapToInt(m -> Integer.parseInt(m.group(1))).max().orElse(0));
        } catch (NumberFormatException e) {
            // a number too large is no attempt of ours
        }
        Path summary = folder.resolve(RunFolder.SUMMARY);
        if (Files.isRegularFile(summary)) {
            Path kept = folder.resolve("summary.until-attempt-" + last + ".json");
            for (int i = 1; Files.exists(kept, LinkOption.NOFOLLOW_LINKS); i++) {
                kept = folder.resolve("summary.until-attempt-" + last + "." + i + ".json");
            }
            Files.move(summary, kept);
        }
        return OptionalInt.of(last + 1);
    }
}
