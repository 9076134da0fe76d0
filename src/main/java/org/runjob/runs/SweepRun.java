package org.runjob.runs;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.runjob.logs.Coordinator;
import org.runjob.logs.RunFolder;
import org.runjob.plan.RunId;
import org.runjob.report.Table;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.Jobs;
import org.runjob.run.RunIds;
import org.runjob.run.RunState;
import org.runjob.spec.EntrypointSpec;
import org.runjob.spec.SpecLoader;
import org.runjob.spec.Sweep;

import tools.jackson.databind.JsonNode;

/**
 * {@code runjob FILE} on a job with a {@code sweep:} block: one run per point of the grid, each an
 * ordinary run (its own run id, folder, directory on every node and record; its point's values in
 * {@code summary.json} under {@code sweep}) in a runjob of its own, at most {@code --max-parallel}
 * at once. Each waits for free GPUs as {@code --wait-for-gpus} does (24 h unless given). This
 * runjob says when each starts and ends, stops them all on Ctrl-C, and ends with a table of
 * every run (values, result, exit code, duration, and the last line of rank 0: its last metrics
 * line when it wrote any, or the run's metric when the job names one: {@code logs.metric}); its exit code is 0
 * only when every run succeeded, 130 when interrupted, else 1. With {@code --detach} it starts
 * them all and leaves them. The sweep has an id ({@code sweep-RUNID}) that each run's
 * {@link SweepRecord} names: {@code runs} groups them, {@code stop SWEEP} stops this runjob and them.
 */
public final class SweepRun {

    /** How much of a refused run's console is read for its reasons. */
    private static final int WHY_BYTES = 64 * 1024;

    /** How long a run of a sweep waits for free GPUs unless --wait-for-gpus says. */
    static final String DEFAULT_WAIT = "24h";

    private SweepRun() {
    }

    /** One run of the sweep: its point, and once started its id, folder and runjob. */
    private static final class Member {
        final int point;
        final Map<String, String> values;
        String runId;
        Path folder;
        Process process;

        Member(int point, Map<String, String> values) {
            this.point = point;
            this.values = values;
        }
    }

    public static int dryRun(Io io, String file, List<String> sets, List<String> args, SpecLoader.Loaded first) {
        Sweep sweep = first.sweep().orElseThrow();
        io.out().println("sweep of job " + first.spec().name() + ": " + sweep.size() + " run" + (sweep.size() == 1 ? "" : "s") + " ("
                + String.join(" x ", sweep.values().entrySet().stream().map(e -> e.getKey() + ": " + e.getValue().size()).toList()) + ")");
        for (int i = 0; i < sweep.size(); i++) {
            SpecLoader.Loaded loaded = Jobs.load(io, file, sets, args, i);
            if (loaded == null) {
                return ExitCode.INVALID;
            }
            io.out().printf("  %3d  %s  %s%n", i + 1, Sweep.describe(loaded.point()), argv(loaded));
        }
        io.out().println("no machine was contacted; runjob " + file + " starts them (each its own run), runjob " + file
                + " --sweep-point N --dry-run shows run N+1's plan");
        io.out().flush();
        return ExitCode.OK;
    }

    public static int run(Io io, String file, SpecLoader.Loaded first, List<String> originalArgs, Optional<Integer> maxParallel, boolean detach,
                   boolean waitGiven) throws IOException, InterruptedException {
        Sweep sweep = first.sweep().orElseThrow();
        List<Member> members = new ArrayList<>();
        for (int i = 0; i < sweep.size(); i++) {
            members.add(new Member(i, sweep.point(i)));
        }
        int parallel = detach ? sweep.size() : maxParallel.orElse(sweep.size());
        Path logs = Path.of(first.spec().logsDir()).resolve(first.spec().name());
        String id = SweepRecord.PREFIX + RunId.of(io.clock().instant(), io.random().getAsInt());
        io.err().println("runjob: " + id + " of job " + first.spec().name() + ": " + sweep.size() + " runs, at most " + parallel + " at once");
        List<Member> waiting = new ArrayList<>(members);
        List<Member> running = new ArrayList<>();
        boolean stopping = false;
        FileChannel proof = null;
        try {
            while (!waiting.isEmpty() || !running.isEmpty()) {
                while (!stopping && running.size() < parallel && !waiting.isEmpty()) {
                    Member m = waiting.remove(0);
                    start(io, m, new SweepRecord(id, first.spec().name(), m.point, sweep.size(), m.values, Coordinator.current()), logs,
                            originalArgs, waitGiven);
                    if (m.point == 0) {
                        // held open while this runjob runs the sweep: stop SWEEP signals only a process that holds it
                        proof = FileChannel.open(m.folder.resolve(SweepRecord.FILE), StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
                    }
                    running.add(m);
                }
                if (detach) {
                    for (Member m : members) {
                        io.out().println(m.runId);
                    }
                    io.out().flush();
                    io.err().println("runjob: the sweep's runs go on on their own: runjob runs lists them, runjob stop " + id
                            + " stops them all");
                    return ExitCode.OK;
                }
                for (Member m : List.copyOf(running)) {
                    if (m.process.waitFor(100, TimeUnit.MILLISECONDS)) {
                        running.remove(m);
                        RunRecords.Run r = RunRecords.read(m.folder, io.env());
                        io.err().println("runjob: sweep run " + (m.point + 1) + "/" + sweep.size() + " (" + Sweep.describe(m.values)
                                + "): run " + m.runId + " " + r.state() + " (exit " + m.process.exitValue() + ")");
                        if (m.process.exitValue() == ExitCode.PREFLIGHT_FAILED) {
                            whyRefused(m.folder).forEach(l -> io.err().println("runjob:   " + l));
                        }
                    }
                }
                if (!stopping && io.interrupts().count() > 0) {
                    stopping = true;
                    waiting.clear();
                    io.err().println("runjob: stopping the sweep's " + running.size() + " running run" + (running.size() == 1 ? "" : "s"));
                    running.forEach(m -> m.process.destroy()); // SIGTERM: each runjob stops its run as Ctrl-C does
                }
            }
            return report(io, members, stopping, first.spec().metric().isPresent());
        } finally {
            if (proof != null) {
                proof.close();
            }
        }
    }

    /** What a run refused in preflight said why in its console: its FAIL lines, or its last line. */
    static List<String> whyRefused(Path folder) {
        List<String> lines = StatusView.tail(folder.resolve(RunFolder.CONSOLE_LOG), WHY_BYTES).lines().toList();
        List<String> fails = lines.stream().filter(l -> l.startsWith("FAIL ")).toList();
        return !fails.isEmpty() ? fails : lines.isEmpty() ? List.of() : List.of(lines.get(lines.size() - 1));
    }

    private static void start(Io io, Member m, SweepRecord record, Path logs, List<String> originalArgs, boolean waitGiven)
            throws IOException {
        int size = record.size();
        m.runId = RunIds.claim(io, logs);
        m.folder = logs.resolve(m.runId);
        record.write(m.folder);
        List<String> args = new ArrayList<>(List.of("--run-id", m.runId, "--sweep-point", Integer.toString(m.point)));
        if (!waitGiven) {
            args.addAll(List.of("--wait-for-gpus", DEFAULT_WAIT));
        }
        args.addAll(childArgs(originalArgs));
        m.process = Detach.spawn(io, args, m.folder.resolve(RunFolder.CONSOLE_LOG));
        io.err().println("runjob: sweep run " + (m.point + 1) + "/" + size + " (" + Sweep.describe(m.values) + "): run " + m.runId
                + ", logs in " + m.folder);
    }

    /** A run's runjob gets this command less --detach and --max-parallel (and the word run). */
    static List<String> childArgs(List<String> originalArgs) {
        List<String> out = new ArrayList<>();
        List<String> args = Detach.childArgs(originalArgs);
        for (int i = 0; i < args.size(); i++) {
            if (args.get(i).equals("--")) {
                out.addAll(args.subList(i, args.size()));
                break;
            }
            if (args.get(i).equals("--max-parallel")) {
                i++;
                continue;
            }
            if (!args.get(i).startsWith("--max-parallel=")) {
                out.add(args.get(i));
            }
        }
        return out;
    }

    /**
     * The table of every run, in grid order; the sweep's exit code.
     *
     * @param metric whether the job names a metric line (logs.metric): its column replaces the last line
     */
    private static int report(Io io, List<Member> members, boolean interrupted, boolean metric) {
        List<String> names = new ArrayList<>(members.get(0).values.keySet());
        List<String> header = new ArrayList<>(List.of("#", "run"));
        header.addAll(names);
        header.addAll(List.of("result", "exit", "duration", metric ? "metric" : "last line"));
        Table t = Table.of("%-3s  %-22s" + "  %-s".repeat(names.size()) + "  %-11s  %4s  %9s  %s", header.toArray(String[]::new));
        boolean allSucceeded = true;
        for (Member m : members) {
            List<Object> row = new ArrayList<>(List.of(m.point + 1, m.runId == null ? "-" : m.runId));
            names.forEach(n -> row.add(m.values.get(n)));
            if (m.folder == null) {
                row.addAll(List.of("not started", "-", "-", ""));
                allSucceeded = false;
            } else {
                RunRecords.Run r = RunRecords.read(m.folder, io.env());
                allSucceeded &= r.state().equals(RunState.SUCCEEDED.label());
                String exit = r.exitCode().or(() -> m.process.isAlive() ? Optional.empty() : Optional.of(m.process.exitValue()))
                        .map(String::valueOf).orElse("-");
                String last = metric ? r.summary().map(x -> x.path("metric").asString("-")).orElse("-")
                        : lastMetrics(r).orElse(StatusView.lastLine(m.folder.resolve("rank-0.log")));
                row.addAll(List.of(r.state(), exit, r.duration(), last));
            }
            t.row(row.toArray());
        }
        t.print(io.out());
        io.out().flush();
        return interrupted ? ExitCode.INTERRUPTED : allSucceeded ? ExitCode.OK : ExitCode.WORKER_FAILED;
    }

    /**
     * Rank 0's last line of RUNJOB_METRICS_FILE, as {@code name=value} of its fields (runjob's own
     * time, rank and attempt left out), when it wrote one: what a sweep's table shows of a run
     * whose job names no {@code logs.metric}.
     */
    static Optional<String> lastMetrics(RunRecords.Run r) {
        return r.summary().map(x -> x.path("metrics").path("ranks").path("0").path("last")).filter(JsonNode::isObject).map(last -> {
            List<String> fields = new ArrayList<>();
            last.properties().forEach(f -> {
                if (!List.of("time", "rank", "attempt").contains(f.getKey())) {
                    fields.add(f.getKey() + "=" + (f.getValue().isString() ? f.getValue().asString() : f.getValue().toString()));
                }
            });
            return String.join(" ", fields);
        }).filter(line -> !line.isEmpty());
    }

    private static String argv(SpecLoader.Loaded loaded) {
        if (loaded.spec().entrypoint() instanceof EntrypointSpec.Command c) {
            return String.join(" ", c.argv());
        }
        EntrypointSpec.Jar j = (EntrypointSpec.Jar) loaded.spec().entrypoint();
        List<String> all = new ArrayList<>(List.of("java", "-cp", j.jarInWorkdir(), j.main()));
        all.addAll(j.args());
        return String.join(" ", all);
    }
}
