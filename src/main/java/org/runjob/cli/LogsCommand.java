package org.runjob.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.runjob.logs.RunFolder;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.Jobs;
import org.runjob.run.RankSelection;
import org.runjob.runs.RunRecords;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code runjob logs RUN [-f] [--ranks R]}: a run's output ({@code all.log}, every line prefixed
 * {@code [node/rank]}; for a detached or submitted run its {@code console.log}, which also has
 * runjob's own lines, shown unless {@code --ranks} picks ranks); with {@code -f} it follows the file until the run has ended (its
 * summary.json is written, or its runjob is gone) and every line is out, then exits with the
 * run's exit code (1 for a run whose runjob died).
 */
@Command(name = "logs", mixinStandardHelpOptions = true, description = "Print a run's output (with runjob's own lines for a detached or submitted run); -f follows it until the run ends and exits with its exit code.")
final class LogsCommand implements Callable<Integer> {

    private static final Pattern PREFIX = Pattern.compile("^\\[[^/\\]]+/(\\d+)(?:#\\d+)?(?::err)?] ");
    static final long POLL_MS = 200;
    private static final long CONSOLE_WAIT_NS = 10_000_000_000L;

    private final Io io;

    @Parameters(index = "0", paramLabel = "RUN", description = "A run id, a unique prefix of one, last, or a run folder.")
    String run;

    @Option(names = {"-f", "--follow"}, description = "Keep printing new output until the run ends.")
    boolean follow;

    @Option(names = "--ranks", split = ",", paramLabel = "RANKS", converter = RankParts.class, description = "Only these ranks, e.g. --ranks 0-3,7.")
    List<String> ranks = new ArrayList<>();

    @Mixin
    RunsOptions options;

    @Spec
    CommandSpec spec;

    LogsCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() throws Exception {
        RankSelection selection = RankSelection.parse(ranks);
        var found = options.find(io, run);
        if (found.isEmpty()) {
            return ExitCode.INVALID;
        }
        if (found.get() instanceof RunsOptions.Submitted s) {
            return Forward.call(io, spec, s.entry());
        }
        RunRecords.Run r = ((RunsOptions.Here) found.get()).run();
        // a detached or submitted run's console has runjob's own lines (restarts, the root cause, the report) among the workers'
        Path log = RunFolder.shownLog(r.folder());
        boolean console = log.getFileName().toString().equals(RunFolder.CONSOLE_LOG);
        long at = 0;
        ByteArrayOutputStream partial = new ByteArrayOutputStream();
        long endedAt = 0;
        String waiting = "";
        while (true) {
            // whether the run had ended is read before the file, so nothing written before the end is missed; a console is
            // whole only once its runjob has exited (it prints the report after writing summary.json), waited for up to 10 s
            RunRecords.Run now = RunRecords.read(r.folder(), io.env());
            if (follow && RunRecords.waitsInQueue(now) && !now.state().equals(waiting)) {
                // a queued run prints nothing until its scheduler starts it: say where it stands, each time that changes
                waiting = now.state();
                io.err().println("runjob: run " + r.runId() + " is " + waiting + " in its scheduler's queue");
                io.err().flush();
            }
            if (!now.live() && endedAt == 0) {
                endedAt = System.nanoTime();
            }
            boolean ended = !follow || !now.live() && (!console || now.coordinator().map(c -> !c.alive()).orElse(true)
                    || System.nanoTime() - endedAt > CONSOLE_WAIT_NS);
            at = copy(log, at, partial, selection);
            // each line as it comes: on a pipe too, and through a submitted run's master node
            io.out().flush();
            if (ended) {
                break;
            }
            if (Jobs.pauseUnlessInterrupted(io, POLL_MS)) {
                return ExitCode.INTERRUPTED;
            }
        }
        if (partial.size() > 0) {
            line(partial.toString(StandardCharsets.UTF_8), selection);
        }
        io.out().flush();
        if (!follow) {
            return ExitCode.OK;
        }
        RunRecords.Run end = RunRecords.read(r.folder(), io.env());
        if (end.exitCode().isEmpty() && end.state().equals("withdrawn")) {
            io.err().println("runjob: run " + r.runId() + " was withdrawn from its scheduler's queue before it started");
            return ExitCode.INTERRUPTED;
        }
        if (end.exitCode().isEmpty()) {
            io.err().println("runjob: run " + r.runId() + " ended without a summary (" + end.state() + ": its runjob is gone)");
            return ExitCode.WORKER_FAILED;
        }
        return end.exitCode().get();
    }

    /** Prints the whole lines that came after {@code from}; returns the new position. */
    private long copy(Path log, long from, ByteArrayOutputStream partial, RankSelection selection) throws IOException {
        if (!Files.exists(log)) {
            return from;
        }
        try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
            long end = f.length();
            if (end <= from) {
                return from;
            }
            f.seek(from);
            byte[] buf = new byte[(int) Math.min(end - from, 1 << 20)];
            f.readFully(buf);
            for (byte b : buf) {
                if (b == '\n') {
                    line(partial.toString(StandardCharsets.UTF_8), selection);
                    partial.reset();
                } else {
                    partial.write(b);
                }
            }
            return from + buf.length;
        }
    }

    private void line(String line, RankSelection selection) {
        if (!selection.ranks().isEmpty()) {
            Matcher m = PREFIX.matcher(line);
            if (!m.find() || !selection.ranks().contains(Integer.parseInt(m.group(1)))) {
                return;
            }
        }
        io.out().println(line);
    }
}
