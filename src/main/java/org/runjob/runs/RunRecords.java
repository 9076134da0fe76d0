package org.runjob.runs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Stream;

import org.runjob.json.Json;
import org.runjob.logs.Coordinator;
import org.runjob.logs.RunFolder;
import org.runjob.node.Backend;
import org.runjob.report.StatusJson;
import org.runjob.run.Owned;
import org.runjob.run.RunIndex;
import org.runjob.run.RunState;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The runs under a logs dir ({@code LOGS/JOB/RUN_ID/}), read from their folders: a finished run
 * from its {@code summary.json}; a run without one from its {@code status.json} and whether the
 * coordinator it names still runs (a run whose coordinator is gone, killed say, is {@code dead},
 * never shown as running). A queued run whose summary reads interrupted asks its scheduler first:
 * one in a requeue's hold reads {@code requeued (until TIME)}.
 */
public final class RunRecords {

    /** One run as its folder shows it. */
    public record Run(Path folder, String job, String runId, String state, Optional<Integer> exitCode, Optional<String> started,
               Optional<String> ended, Optional<String> commit, Optional<JsonNode> status, Optional<JsonNode> summary, Optional<String> why) {

        /** A run folder whose records are larger than runjob writes: {@link #why} names the file. */
        static final String UNREADABLE = "unreadable";

        /** A queued job that ended before its runjob started: {@link #why} says what the scheduler recorded. */
        static final String UNSTARTED = "failed to start";

        /**
         * A queued run whose scheduler requeued it after its last attempt (the summary reads
         * interrupted): it waits to start again as its next attempt, and is live, as a run that
         * {@code submit --resume} queued again is.
         */
        static final String REQUEUED = "requeued";

        /** True for a state that waits in a scheduler's queue: queued, or requeued and held. */
        static boolean waiting(String state) {
            return state.startsWith("queued") || state.startsWith(REQUEUED);
        }

        Run(Path folder, String job, String runId, String state, Optional<Integer> exitCode, Optional<String> started,
            Optional<String> ended, Optional<String> commit, Optional<JsonNode> status, Optional<JsonNode> summary) {
            this(folder, job, runId, state, exitCode, started, ended, commit, status, summary, Optional.empty());
        }

        public boolean live() {
            return (summary.isEmpty() || waiting(state)) && !state.equals("dead") && !state.equals(RunState.PREFLIGHT_FAILED.label())
                    && !state.equals("withdrawn") && !state.equals(UNSTARTED);
        }

        public Optional<Coordinator> coordinator() {
            return status.map(StatusJson::coordinator);
        }

        /** From start to end as "12.3s"; "-" while it runs, or when either time is missing or no time. */
        public String duration() {
            try {
                if (started.isPresent() && ended.isPresent()) {
                    return String.format(Locale.ROOT, "%.1fs", Duration.between(Instant.parse(started.get()), Instant.parse(ended.get())).toMillis() / 1000.0);
                }
            } catch (DateTimeParseException e) {
                // not a time: unknown
            }
            return "-";
        }
    }

    private static final JsonMapper JSON = Json.MAPPER;

    private RunRecords() {
    }

    /** Every run under {@code logsDir}, oldest first (run ids begin with their start time). */
    public static List<Run> list(Path logsDir, Map<String, String> env) throws IOException {
        return list(logsDir, env, why -> { });
    }

    /**
     * As {@link #list(Path, Map)}; a job's or run's folder that is not to be believed
     * ({@link Owned#runFolder}: another user's, or writable by others) is left out, and why is
     * given to {@code untrusted}.
     */
    public static List<Run> list(Path logsDir, Map<String, String> env, Consumer<String> untrusted) throws IOException {
        List<Run> runs = new ArrayList<>();
        if (!Files.isDirectory(logsDir)) {
            return runs;
        }
        try (Stream<Path> jobs = Files.list(logsDir)) {
            for (Path job : jobs.filter(p -> Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)).toList()) {
                Optional<String> jobProblem = Owned.runFolder(job);
                if (jobProblem.isPresent()) {
                    untrusted.accept(jobProblem.get());
                    continue;
                }
                try (Stream<Path> folders = Files.list(job)) {
                    for (Path f : folders.filter(RunRecords::isRun).toList()) {
                        Optional<String> problem = Owned.runFolder(f);
                        if (problem.isPresent()) {
                            untrusted.accept(problem.get());
                        } else {
                            runs.add(read(f, env));
                        }
                    }
                }
            }
        }
        runs.sort(Comparator.comparing(Run::runId));
        return runs;
    }

    /**
     * Every run this machine has a folder of, oldest first: those under {@code logsDir} and, with
     * {@code index}, those in the run index (a submitted run's folder is on its node: not here).
     * A folder not to be believed ({@link Owned#runFolder}) is left out, and why given to {@code untrusted}.
     */
    public static List<Run> everywhere(Path logsDir, boolean index, Map<String, String> env, Consumer<String> untrusted) throws IOException {
        List<Run> runs = new ArrayList<>(list(logsDir, env, untrusted));
        if (index) {
            RunIndex.problem(env).ifPresent(untrusted);
            Set<Path> seen = new HashSet<>();
            runs.forEach(r -> seen.add(r.folder().toAbsolutePath().normalize()));
            for (RunIndex.Entry e : RunIndex.list(env)) {
                if (!e.isSubmitted() && seen.add(Path.of(e.folder()))) {
                    Optional<String> problem = Owned.runFolder(Path.of(e.folder()));
                    if (problem.isPresent()) {
                        untrusted.accept(problem.get());
                    } else {
                        runs.add(read(Path.of(e.folder()), env));
                    }
                }
            }
            runs.sort(Comparator.comparing(Run::runId));
        }
        return runs;
    }

    /** A run folder: one with a status, a summary, or a queued job's record. */
    static boolean isRun(Path p) {
        return Files.isRegularFile(p.resolve(RunFolder.STATUS)) || Files.isRegularFile(p.resolve(RunFolder.SUMMARY))
                || Files.isRegularFile(p.resolve(QueuedRun.QUEUE_FILE));
    }

    /**
     * The restarts of its batch job the attempt a summary tells of had seen: {@code restart_count}
     * of the summary's block of its backend ({@code handle}: {@code "slurm": {...}}); 0 when not said.
     */
    private static int restartsSeen(JsonNode handle) {
        String n = handle.path("restart_count").asString("0");
        return n.matches("\\d{1,9}") ? Integer.parseInt(n) : 0;
    }

    /** The states a runjob writes into status.json as it ends. */
    private static final Set<String> ENDED = Set.of(RunState.SUCCEEDED.label(), RunState.FAILED.label(), RunState.INTERRUPTED.label());

    /** True while {@code run} waits in its scheduler's queue: queued, or requeued and held. */
    public static boolean waitsInQueue(Run run) {
        return Run.waiting(run.state());
    }

    /** @param env where a queued run's scheduler is asked from (a scheduler's client finds its cluster through it) */
    public static Run read(Path folder, Map<String, String> env) {
        Optional<String> oversized = oversized(folder);
        if (oversized.isPresent()) {
            // a record runjob did not write: neither believed nor read
            return new Run(folder, folder.getParent().getFileName().toString(), folder.getFileName().toString(), Run.UNREADABLE, Optional.empty(),
                    Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), oversized);
        }
        Optional<JsonNode> summary = json(folder.resolve(RunFolder.SUMMARY));
        Optional<JsonNode> status = json(folder.resolve(RunFolder.STATUS));
        Optional<String> why = Optional.empty();
        String state;
        // the state is the queue's, not the last attempt's: that attempt's exit code is not this state's
        boolean fromQueue = false;
        if (summary.isPresent()) {
            state = summary.get().path("result").asString("?");
            Optional<Map.Entry<Backend, String>> queuedAs = QueuedRun.of(folder);
            Optional<String> job = queuedAs.map(Map.Entry::getValue);
            // the run handle the attempt ran in, under its backend's name ("slurm": {"job_id": ...})
            JsonNode handle = summary.get().path(queuedAs.map(q -> q.getKey().name()).orElse(""));
            String ranIn = handle.path("job_id").asString("");
            if (job.isPresent() && (state.equals("interrupted") || !job.get().equals(ranIn))) {
                // a requeue interrupts the attempt, and submit --resume queues a new job: either waits to go on as the next attempt
                Optional<String> queued = QueuedRun.state(folder, env);
                if (queued.filter(Run::waiting).isPresent()) {
                    state = queued.get();
                    fromQueue = true;
                } else if (state.equals("interrupted") && queued.filter(RunState.RUNNING.label()::equals).isPresent()
                        && QueuedRun.runsAgain(folder, restartsSeen(handle), env)) {
                    // Slurm requeued the job and started it again: its next attempt's runjob is starting, and the summary
                    // is the last attempt's until that runjob writes its status
                    state = RunState.RUNNING.label();
                    fromQueue = true;
                }
            }
        } else if (status.isPresent()) {
            String s = status.get().path("state").asString("?");
            state = s.equals(RunState.PREFLIGHT_FAILED.label()) ? s : StatusJson.coordinator(status.get()).alive() ? s : "dead";
        } else {
            state = "dead";
        }
        // the status an attempt's runjob wrote as it ended, its summary moved aside: the next attempt's runjob is starting
        boolean stale = summary.isEmpty() && status.map(s -> ENDED.contains(s.path("state").asString(""))).orElse(false);
        if (summary.isEmpty() && (state.equals("dead") || stale)) {
            // a queued run: its runjob lives on a node of the allocation, or is still to start; the scheduler knows
            Optional<String> queued = QueuedRun.state(folder, env);
            if (queued.isPresent()) {
                String running = RunState.RUNNING.label();
                state = Run.waiting(queued.get()) ? queued.get() : stale ? running : status.map(s -> s.path("state").asString(running)).orElse(running);
            } else if (status.isEmpty() && QueuedRun.of(folder).isPresent()) {
                // the job left the queue before its runjob started: withdrawn, or it failed on its node
                why = QueuedRun.unstarted(folder, env);
                state = why.isPresent() ? Run.UNSTARTED : "withdrawn";
            }
        }
        Optional<Integer> exit = fromQueue ? Optional.empty() : summary.map(s -> s.path("exit_code").asInt(-1));
        Optional<String> started = summary.map(s -> s.path("start").asString(null)).or(() -> status.map(s -> s.path("started").asString(null)));
        Optional<String> ended = summary.map(s -> s.path("end").asString(null));
        Optional<String> commit = summary.map(s -> s.path("git").path("commit").asString(null));
        return new Run(folder, folder.getParent().getFileName().toString(), folder.getFileName().toString(), state, exit, started, ended,
                commit, status, summary, why);
    }

    /**
     * A run by reference: a run folder's path, {@code last} (the newest run), a run id or
     * {@code JOB/ID}, or a unique prefix of either.
     *
     * @throws IllegalArgumentException saying why none or several match
     */
    public static Run resolve(Path logsDir, String ref, Map<String, String> env) throws IOException {
        Path asPath = Path.of(ref);
        if (isRun(asPath)) {
            Optional<String> problem = Owned.runFolder(asPath);
            if (problem.isPresent()) {
                throw new IllegalArgumentException(problem.get());
            }
            return read(asPath, env);
        }
        List<String> untrusted = new ArrayList<>();
        List<Run> runs = list(logsDir, env, untrusted::add);
        if (ref.equals("last")) {
            if (runs.isEmpty()) {
                throw new IllegalArgumentException("no runs under " + logsDir);
            }
            return runs.get(runs.size() - 1);
        }
        List<Run> matches = runs.stream().filter(r -> r.runId().startsWith(ref) || (r.job() + "/" + r.runId()).startsWith(ref)).toList();
        if (matches.size() == 1) {
            return matches.get(0);
        }
        if (matches.isEmpty()) {
            throw new IllegalArgumentException("no run " + ref + " under " + logsDir + " (runjob runs lists them; --logs-dir names another)"
                    + (untrusted.isEmpty() ? "" : "; left out: " + String.join("; ", untrusted)));
        }
        int shown = Math.min(AMBIGUOUS_SHOWN, matches.size());
        StringBuilder b = new StringBuilder(ref + " names " + matches.size() + " runs; give more of the id, or JOB/ID:");
        // the newest first, one a line
        for (int i = matches.size() - 1; i >= matches.size() - shown; i--) {
            b.append("\n  ").append(matches.get(i).job()).append('/').append(matches.get(i).runId());
        }
        if (shown < matches.size()) {
            b.append("\n  ... and ").append(matches.size() - shown).append(" older (runjob runs lists them all)");
        }
        throw new IllegalArgumentException(b.toString());
    }

    /** How many runs an ambiguous id lists, newest first. */
    static final int AMBIGUOUS_SHOWN = 8;

    /** A run whose status.json or summary.json is larger than runjob reads back: why, naming the file. */
    private static Optional<String> oversized(Path folder) {
        for (String name : List.of(RunFolder.SUMMARY, RunFolder.STATUS)) {
            try {
                Path f = folder.resolve(name);
                if (Files.isRegularFile(f) && Files.size(f) > Json.MAX_FILE_BYTES) {
                    return Optional.of(name + " is " + (Files.size(f) >> 20) + " MiB, more than the " + (Json.MAX_FILE_BYTES >> 20)
                            + " MiB runjob reads back: not runjob's");
                }
            } catch (IOException e) {
                // gone meanwhile
            }
        }
        return Optional.empty();
    }

    private static Optional<JsonNode> json(Path file) {
        try {
            // a file another writer has only begun (empty, or cut short) is no record yet
            return Files.isRegularFile(file) ? Optional.of(Json.read(file)).filter(JsonNode::isObject) : Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
