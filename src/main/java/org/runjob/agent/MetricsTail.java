package org.runjob.agent;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.runjob.protocol.MetricsChunk;

/**
 * A worker's RUNJOB_METRICS_FILE, followed: the lines it appends (JSON objects, one per line, as
 * the worker writes them) are handed on whole, a chunk of complete lines at a time, from
 * {@link #poll}, which the agent calls every {@value #POLL_MS} ms while the worker runs and once
 * after it exits ({@link #finish}: a last line without its newline then counts as a line). A line
 * longer than {@value #MAX_LINE} bytes is handed on cut (the coordinator counts it malformed). A
 * file that shrinks (the worker truncated it) is read again from its start; a symlink is not read.
 *
 * <p>A poll reads at most {@link #PER_POLL} bytes ({@link MetricsChunk#FORWARD_MIB_PER_S} MiB/s), in
 * chunks of at most {@value #READ} bytes, so neither this agent nor runjob holds more of a flood
 * than that. A file more than {@value #BACKLOG} bytes ahead of the reader (a worker writing faster
 * than that for seconds) is skipped to its end, from its next line on, and the bytes skipped are
 * handed on with the next chunk, to be counted.
 */
final class MetricsTail {

    static final String VARIABLE = "RUNJOB_METRICS_FILE";
    static final long POLL_MS = 50;
    static final int MAX_LINE = 64 * 1024;
    static final int READ = 64 * 1024;
    static final long PER_POLL = (MetricsChunk.FORWARD_MIB_PER_S << 20) * POLL_MS / 1000;
    static final long BACKLOG = 4L << 20;

    /** Where the lines go: a chunk of complete lines, with the bytes skipped before them. */
    interface Sink {
        void chunk(long skippedBytes, byte[] lines);
    }

    private final Path file;
    private final Sink lines;
    private long position;
    private byte[] partial = new byte[0];
    private boolean skipping;
    private long skipped;

    MetricsTail(Path file, Sink lines) {
        this.file = file;
        this.lines = lines;
    }

    /** One thread polls every worker's file on this node. */
    private static final ScheduledExecutorService POLLER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "metrics-tail");
        t.setDaemon(true);
        return t;
    });

    /** Polls every {@value #POLL_MS} ms until the returned future is cancelled. */
    ScheduledFuture<?> follow() {
        return POLLER.scheduleWithFixedDelay(this::poll, POLL_MS, POLL_MS, TimeUnit.MILLISECONDS);
    }

    /**
     * RUNJOB_METRICS_FILE for a worker: the job's own value (relative to the workdir) is kept, and
     * followed from its start; else a file of this run, attempt and rank under the workdir's
     * {@code .runjob/metrics}, where any file left is removed first, so a worker starts with none.
     */
    static Path fileFor(Path workdir, Map<String, String> env) {
        String name = env.get(VARIABLE);
        if (name != null && !name.isEmpty()) {
            Path own = workdir.resolve(name);
            env.put(VARIABLE, own.toString());
            return own;
        }
        Path f = workdir.resolve(".runjob/metrics").resolve(env.getOrDefault("RUNJOB_RUN_ID", "run") + "-attempt-"
                + env.getOrDefault("RUNJOB_ATTEMPT", "0") + "-rank-" + env.getOrDefault("RANK", "0") + ".jsonl");
        env.put(VARIABLE, f.toString());
        try {
            Files.createDirectories(f.getParent());
            Files.deleteIfExists(f);
        } catch (IOException e) {
            // the worker finds out when it writes there
        }
        return f;
    }

    /** Removes the file of runjob's own naming once it has been read whole (a job's own file is the job's). */
    void remove() {
        if (file.getParent() != null && file.getParent().endsWith(".runjob/metrics")) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                // left for the next run of this rank, which removes it first
            }
        }
    }

    /** Hands on the complete lines appended since the last poll. */
    synchronized void poll() {
        read(false);
    }

    /** The last poll, once the worker has exited: a line without its newline is handed on too. */
    synchronized void finish() {
        read(true);
    }

    private void read(boolean last) {
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            if (ch.size() < position) {
                position = 0;
                partial = new byte[0];
                skipping = false;
            }
            long size = ch.size();
            if (size - position > BACKLOG) {
                skipped += size - position;
                position = size;
                partial = new byte[0];
                ByteBuffer lastByte = ByteBuffer.allocate(1);
                skipping = ch.read(lastByte, size - 1) != 1 || lastByte.get(0) != '\n';
            }
            long budget = last ? BACKLOG : PER_POLL;
            ByteBuffer buf = ByteBuffer.allocate(READ);
            int n;
            while (budget > 0 && (n = ch.read(buf.limit((int) Math.min(READ, budget)), position)) > 0) {
                position += n;
                budget -= n;
                take(Arrays.copyOf(buf.array(), n));
                buf.clear();
            }
        } catch (IOException e) {
            return; // unreadable now: the next poll tries again
        }
        if (last && partial.length > 0 && !skipping) {
            byte[] line = Arrays.copyOf(partial, partial.length + 1);
            line[partial.length] = '\n';
            hand(line);
            partial = new byte[0];
        }
        if (skipped > 0) {
            hand(new byte[0]);
        }
    }

    private void hand(byte[] chunk) {
        lines.chunk(skipped, chunk);
        skipped = 0;
    }

    /** Splits {@code bytes} (after what is left of the last read) into lines, handing on the complete ones. */
    private void take(byte[] bytes) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int start = 0;
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] != '\n') {
                continue;
            }
            if (!skipping) {
                int keep = Math.min(MAX_LINE - partial.length, i - start);
                out.write(partial, 0, partial.length);
                out.write(bytes, start, Math.max(keep, 0));
                out.write('\n');
            }
            partial = new byte[0];
            skipping = false;
            start = i + 1;
        }
        if (!skipping && start < bytes.length) {
            int room = MAX_LINE - partial.length;
            int len = bytes.length - start;
            byte[] grown = Arrays.copyOf(partial, partial.length + Math.min(room, len));
            System.arraycopy(bytes, start, grown, partial.length, Math.min(room, len));
            partial = grown;
            if (len > room) {
                // longer than a line may be: what came is handed on, the rest up to its newline is dropped
                out.write(partial, 0, partial.length);
                out.write('\n');
                partial = new byte[0];
                skipping = true;
            }
        }
        if (out.size() > 0) {
            hand(out.toByteArray());
        }
    }
}
