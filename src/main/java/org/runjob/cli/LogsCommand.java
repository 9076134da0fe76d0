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

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code runjob logs RUN [-f] [--ranks R]}: a run's output ({@code all.log}, every line prefixed
 * {@code [node/rank]}); with {@code -f} it follows the file until the run has ended (its
 * summary.json is written, or its runjob is gone) and every line is out.
 */
@Command(name = "logs", mixinStandardHelpOptions = true, description = "Print a run's output; -f follows it until the run ends.")
final class LogsCommand implements Callable<Integer> {

    private static final Pattern PREFIX = Pattern.compile("^\\[[^/\\]]+/(\\d+)(?:#\\d+)?(?::err)?] ");
    static final long POLL_MS = 200;

    private final Io io;

    @Parameters(index = "0", paramLabel = "RUN", description = "A run id, a unique prefix of one, last, or a run folder.")
    String run;

    @Option(names = {"-f", "--follow"}, description = "Keep printing new output until the run ends.")
    boolean follow;

    @Option(names = "--ranks", split = ",", paramLabel = "RANKS", description = "Only these ranks, e.g. --ranks 0-3,7.")
    List<String> ranks = new ArrayList<>();

    @Mixin
    RunsOptions options;

    LogsCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() throws Exception {
        var parsed = RankSelection.parse(io, ranks);
        if (parsed.isEmpty()) {
            return ExitCode.INVALID;
        }
        RankSelection selection = parsed.get();
        var found = options.resolve(io, run);
        if (found.isEmpty()) {
            return ExitCode.INVALID;
        }
        RunRecords.Run r = found.get();
        Path log = r.folder().resolve("all.log");
        long at = 0;
        ByteArrayOutputStream partial = new ByteArrayOutputStream();
        while (true) {
            // whether the run had ended is read before the file, so nothing written before the end is missed
            boolean ended = !follow || !RunRecords.read(r.folder()).live();
            at = copy(log, at, partial, selection);
            if (ended) {
                break;
            }
            Thread.sleep(POLL_MS);
        }
        if (partial.size() > 0) {
            line(partial.toString(StandardCharsets.UTF_8), selection);
        }
        io.out().flush();
        return ExitCode.OK;
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
