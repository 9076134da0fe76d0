package org.runjob.launch;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.runjob.protocol.Frame;
import org.runjob.protocol.Stacks;

/**
 * Every rank's stacks, for the supervisor, on its thread: captures asked for through the run
 * folder ({@code runjob stacks} creates {@code stacks/requests/ID}, holding {@code native} for
 * py-spy's native frames too) and, with
 * {@code failure.hang_timeout_s}, the one capture that declares the attempt hung.
 *
 * <p>A capture sends STACKS to every agent and writes each running rank's answer to
 * {@code stacks/ID/rank-R.txt}; when every rank answered, or after {@value #CAPTURE_MS} ms, it
 * writes {@code stacks/ID/summary.txt} ({@link StackSummary}, one line per rank) last, which is
 * what a waiting {@code runjob stacks} looks for. One capture at a time; requests queue.
 */
final class StackWatch {

    static final long POLL_MS = 250;
    static final long CAPTURE_MS = 10_000;
    static final String REQUESTS = "requests";
    /** A capture id: what a request file may be called. */
    static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
    private static final Logger LOG = LogManager.getLogger(StackWatch.class);

    /** Told once, when the hang capture is complete: the rank that stood out, else the first that was running. */
    interface Hung {
        void hung(int rank, Outcome.Hung outcome);
    }

    private final Path stacks;
    private final int attempt;
    private final long hangNanos;
    private final Consumer<Frame> sendAll;
    private final Hung onHang;
    /** Requests from the run folder (a file that says {@code native} asks for native frames too). */
    private final Deque<Stacks.Request> queued = new ArrayDeque<>();
    private Capture capture;
    private long lastPoll;
    private boolean hangTaken;

    /** @param hangTimeoutSeconds 0: no hang detection */
    StackWatch(Path runFolder, int attempt, double hangTimeoutSeconds, Consumer<Frame> sendAll, Hung onHang) {
        this.stacks = runFolder.resolve("stacks");
        this.attempt = attempt;
        this.hangNanos = Math.round(hangTimeoutSeconds * 1e9);
        this.sendAll = sendAll;
        this.onHang = onHang;
    }

    /** The capture in flight. */
    private final class Capture {
        final String id;
        final boolean hang;
        final Path dir;
        final Map<Integer, String> expected;
        final Map<Integer, String> texts = new TreeMap<>();
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CAPTURE_MS);

        Capture(String id, boolean hang, Map<Integer, String> running) throws IOException {
            this.id = id;
            this.hang = hang;
            this.dir = stacks.resolve(id);
            this.expected = new TreeMap<>(running);
            Files.createDirectories(dir);
        }
    }

    /**
     * One look, each turn of the supervisor's loop: finishes a capture that is complete or due,
     * takes requests (every {@value #POLL_MS} ms), and starts the hang capture when no rank wrote
     * anything for the timeout.
     *
     * @param running      the running ranks and their nodes (asked only when a capture starts)
     * @param lastActivity System.nanoTime() of the last output (or start) of any rank
     * @param stopping     the attempt is stopping: no hang is declared any more
     */
    void tick(Supplier<Map<Integer, String>> running, long lastActivity, boolean stopping) {
        long now = System.nanoTime();
        if (capture != null && (capture.texts.keySet().containsAll(capture.expected.keySet()) || now > capture.deadline)) {
            finish(true);
        }
        if (now - lastPoll > TimeUnit.MILLISECONDS.toNanos(POLL_MS)) {
            lastPoll = now;
            poll();
        }
        if (capture == null && hangNanos > 0 && !hangTaken && !stopping && now - lastActivity >= hangNanos) {
            Map<Integer, String> ranks = running.get();
            if (!ranks.isEmpty()) {
                hangTaken = true;
                LOG.warn("no rank wrote output for {}: taking every rank's stacks, then stopping the attempt (failure.hang_timeout_s)", seconds());
                begin(new Stacks.Request("attempt-" + attempt + "-hang", false), true, ranks);
            }
        }
        if (capture == null && !queued.isEmpty()) {
            begin(queued.poll(), false, running.get());
        }
    }

    /** A rank's answer to STACKS. */
    void received(int rank, String id, String text) {
        if (capture == null || !capture.id.equals(id) || !capture.expected.containsKey(rank)) {
            return;
        }
        capture.texts.put(rank, text);
        write(capture.dir.resolve("rank-" + rank + ".txt"), "[" + capture.expected.get(rank) + "/" + rank + "]\n" + text);
    }

    /** The attempt ended: a capture in flight is finished with what came (a hang is no longer declared). */
    void close() {
        if (capture != null) {
            finish(false);
        }
    }

    private void begin(Stacks.Request request, boolean hang, Map<Integer, String> running) {
        try {
            capture = new Capture(request.id(), hang, running);
        } catch (IOException e) {
            LOG.warn("cannot write stacks to {}: {}", stacks.resolve(request.id()), e.getMessage());
            return;
        }
        sendAll.accept(new Frame(Frame.Type.STACKS, -1, request.encode()));
        if (running.isEmpty()) {
            finish(true);
        }
    }

    private void finish(boolean declare) {
        Capture c = capture;
        capture = null;
        for (Map.Entry<Integer, String> e : c.expected.entrySet()) {
            if (!c.texts.containsKey(e.getKey())) {
                String none = "no answer from its agent within " + CAPTURE_MS / 1000 + " s\n";
                c.texts.put(e.getKey(), none);
                write(c.dir.resolve("rank-" + e.getKey() + ".txt"), "[" + e.getValue() + "/" + e.getKey() + "]\n" + none);
            }
        }
        StackSummary summary = StackSummary.of(c.texts);
        List<String> lines = c.expected.isEmpty() ? List.of("no rank was running") : summary.lines();
        write(c.dir.resolve("summary.txt"), String.join("\n", lines) + "\n");
        if (c.hang && declare && !c.expected.isEmpty()) {
            int rank = summary.suspects().stream().filter(c.expected::containsKey).findFirst().orElse(c.expected.keySet().iterator().next());
            onHang.hung(rank, new Outcome.Hung("no rank wrote output for " + seconds(), "stacks/" + c.id, summary.lines()));
        }
    }

    /** Takes request files (oldest name first), removing each. */
    private void poll() {
        Path dir = stacks.resolve(REQUESTS);
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        TreeMap<String, Boolean> requests = new TreeMap<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path f : files) {
                String name = f.getFileName().toString();
                if (name.startsWith(".")) {
                    continue; // a request being written: it is renamed into place whole
                }
                boolean nativeFrames = Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS) && Files.size(f) < 64
                        && Files.readString(f).strip().equals("native");
                Files.deleteIfExists(f);
                if (ID.matcher(name).matches() && !name.equals(REQUESTS) && !Files.exists(stacks.resolve(name))) {
                    requests.put(name, nativeFrames);
                }
            }
        } catch (IOException e) {
            LOG.debug("cannot read stack requests: {}", e.getMessage());
        }
        requests.forEach((id, nativeFrames) -> queued.add(new Stacks.Request(id, nativeFrames)));
    }

    private String seconds() {
        double s = hangNanos / 1e9;
        return (s == Math.rint(s) ? Long.toString((long) s) : Double.toString(s)) + " s";
    }

    /**
     * Writes {@code file} whole or not at all (a temporary file renamed over it): {@code runjob stacks}
     * polls for summary.txt and reads it as soon as it exists.
     */
    private static void write(Path file, String text) {
        Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
        try {
            Files.writeString(tmp, text, StandardCharsets.UTF_8);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            LOG.warn("cannot write {}: {}", file, e.getMessage());
        }
    }
}
