package org.runjob.logs;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Where worker output goes, from the supervisor's one thread, in arrival order:
 * <ol>
 *   <li>{@code rank-N.log} (attempts after the first: {@code rank-N.attempt-K.log}) gets the
 *       rank's stdout and stderr bytes exactly, interleaved in arrival order at line boundaries
 *       (only a line over {@value #MAX_FILE_LINE} bytes can be cut by a line of the other stream);</li>
 *   <li>{@code all.log} gets every line, prefixed {@code [node/rank]} or {@code [node/rank:err]} ({@code [node/rank#K]} in restart K);
 *       a line is written whole, so lines of different ranks never mix;</li>
 *   <li>the {@link Console} gets the same lines (for the ranks it shows).</li>
 * </ol>
 * Lines longer than {@value #MAX_LINE} bytes are split in all.log and on the console, never in the
 * rank files. The last {@value #TAIL} stderr lines of each rank are kept for the failure report.
 */
public final class OutputRouter implements AutoCloseable {

    static final int MAX_LINE = 64 * 1024;
    static final int MAX_FILE_LINE = 8 * 1024 * 1024;
    public static final int TAIL = 20;

    private final Path folder;
    private final Console console;
    private final OutputStream all;
    private final Map<Integer, OutputStream> rankFiles = new HashMap<>();
    private final Map<String, LineSplitter> splitters = new HashMap<>();
    private final Map<Integer, ArrayDeque<String>> stderrTail = new HashMap<>();
    private final Map<Integer, long[]> bytes = new HashMap<>();
    private final Map<Integer, String> nodes = new HashMap<>();
    private final Map<String, byte[]> prefixes = new HashMap<>();
    private final MetricsLog metrics;
    private int attempt;

    public OutputRouter(Path folder, Console console) throws IOException {
        this.folder = folder;
        this.console = console;
        this.metrics = new MetricsLog(folder, Clock.systemUTC());
        this.all = new BufferedOutputStream(Files.newOutputStream(folder.resolve(RunFolder.ALL_LOG)), 1 << 16);
    }

    /** The run folder. */
    public Path folder() {
        return folder;
    }

    /** Starts a new attempt: later output goes to that attempt's rank files. */
    public void attempt(int attempt) throws IOException {
        flushPartials();
        closeRankFiles();
        this.attempt = attempt;
        metrics.stragglers().attempt();
        prefixes.clear();
        splitters.clear();
        stderrTail.clear();
        bytes.clear();
    }

    public static String rankFileName(int rank, int attempt) {
        return attempt == 0 ? "rank-" + rank + ".log" : "rank-" + rank + ".attempt-" + attempt + ".log";
    }

    /** A worker started: its rank file exists from now on, even if it never prints. */
    public void started(String node, int rank) throws IOException {
        nodes.put(rank, node);
        rankFile(rank);
    }

    public void output(String node, int rank, boolean stderr, byte[] data) {
        try {
            nodes.put(rank, node);
            OutputStream file = rankFile(rank);
            bytes.computeIfAbsent(rank, r -> new long[2])[stderr ? 1 : 0] += data.length;
            fileSplitter(rank, stderr).feed(data, (buf, off, len, ended) -> writeRankFile(file, buf, off, len, ended));
            splitter(rank, stderr).feed(data, (buf, off, len, ended) -> writeLine(node, rank, stderr, buf, off, len));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void writeRankFile(OutputStream file, byte[] buf, int off, int len, boolean ended) {
        try {
            file.write(buf, off, len);
            if (ended) {
                file.write('\n');
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void writeLine(String node, int rank, boolean stderr, byte[] buf, int off, int len) {
        byte[] prefix = prefixes.computeIfAbsent(rank + (stderr ? ":err" : ":out"),
                k -> ("[" + node + "/" + rank + (attempt == 0 ? "" : "#" + attempt) + (stderr ? ":err] " : "] ")).getBytes(StandardCharsets.UTF_8));
        try {
            all.write(prefix);
            all.write(buf, off, len);
            all.write('\n');
            console.line(node, rank, prefix, buf, off, len);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (stderr) {
            ArrayDeque<String> tail = stderrTail.computeIfAbsent(rank, r -> new ArrayDeque<>());
            tail.add(new String(buf, off, len, StandardCharsets.UTF_8));
            if (tail.size() > TAIL) {
                tail.poll();
            }
        }
    }

    /** A rank ended: what it printed without a final newline is written out, stdout first. */
    public void finish(int rank) {
        flushPartial(rank, false);
        flushPartial(rank, true);
        metrics.stragglers().ended(rank, Instant.now());
    }

    /** The last stderr lines of a rank in this attempt, oldest first. */
    public List<String> stderrTail(int rank) {
        return List.copyOf(stderrTail.getOrDefault(rank, new ArrayDeque<>()));
    }

    /**
     * Lines of a rank's RUNJOB_METRICS_FILE read at {@code read} ({@link MetricsLog}): to
     * {@code metrics/rank-N.jsonl}; {@code skippedBytes} of the file its agent skipped before them.
     */
    public void metrics(String node, int rank, Instant read, byte[] lines, long skippedBytes) {
        try {
            metrics.skipped(rank, skippedBytes);
            metrics.accept(node, rank, attempt, read, lines);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A GPU sample of {@code node} ({@link MetricsLog#gpu}): to {@code metrics/gpu-NODE.jsonl}. */
    public void gpuSample(String node, byte[] line) {
        try {
            metrics.gpu(node, attempt, new String(line, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A sample of a registered observation source of {@code node} ({@link MetricsLog#sample}): to {@code metrics/source-NAME-NODE.jsonl}. */
    public void sample(String node, String source, byte[] line) {
        try {
            metrics.sample(source, node, attempt, new String(line, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Judges the straggler window that ended by {@code now}, if one did ({@link StragglerWatch}). */
    public void tick(Instant now) {
        metrics.stragglers().tick(now);
    }

    /** The metrics taken so far. */
    public MetricsLog metricsLog() {
        return metrics;
    }

    /** {stdout bytes, stderr bytes} of a rank in this attempt. */
    public long[] bytes(int rank) {
        return bytes.getOrDefault(rank, new long[2]).clone();
    }

    public void flush() throws IOException {
        all.flush();
        metrics.flush();
        console.flush();
        for (OutputStream o : rankFiles.values()) {
            o.flush();
        }
    }

    private OutputStream rankFile(int rank) throws IOException {
        OutputStream o = rankFiles.get(rank);
        if (o == null) {
            o = new BufferedOutputStream(Files.newOutputStream(folder.resolve(rankFileName(rank, attempt))), 1 << 16);
            rankFiles.put(rank, o);
        }
        return o;
    }

    private LineSplitter splitter(int rank, boolean stderr) {
        return splitters.computeIfAbsent(rank + (stderr ? ":err" : ":out"), k -> new LineSplitter(MAX_LINE));
    }

    private LineSplitter fileSplitter(int rank, boolean stderr) {
        return splitters.computeIfAbsent(rank + (stderr ? ":file-err" : ":file-out"), k -> new LineSplitter(MAX_FILE_LINE));
    }

    private void flushPartial(int rank, boolean stderr) {
        LineSplitter f = splitters.get(rank + (stderr ? ":file-err" : ":file-out"));
        if (f != null) {
            try {
                OutputStream file = rankFile(rank);
                f.finish((buf, off, len, ended) -> writeRankFile(file, buf, off, len, ended));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        LineSplitter s = splitters.get(rank + (stderr ? ":err" : ":out"));
        if (s != null) {
            s.finish((buf, off, len, ended) -> writeLine(nodes.getOrDefault(rank, "?"), rank, stderr, buf, off, len));
        }
    }

    private void flushPartials() {
        for (int rank : nodes.keySet()) {
            flushPartial(rank, false);
            flushPartial(rank, true);
        }
    }

    private void closeRankFiles() throws IOException {
        for (OutputStream o : rankFiles.values()) {
            o.close();
        }
        rankFiles.clear();
    }

    @Override
    public void close() throws IOException {
        flushPartials();
        closeRankFiles();
        all.close();
        metrics.close();
        console.flush();
    }
}
