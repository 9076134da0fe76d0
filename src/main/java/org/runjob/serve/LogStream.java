package org.runjob.serve;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.runjob.json.Json;
import org.runjob.protocol.Printable;

/**
 * A run's log as Server-Sent Events: its last {@value #BACKLOG} lines, then each line as it is
 * written ({@code event: line}, the line as a JSON string, printable), read from the run folder's
 * combined log every {@value #POLL_MS} ms; {@code event: end} once the run has ended and its log
 * stopped growing. A line keeps its first {@value #LINE_CHARS} characters. With a rank, only that
 * rank's lines ({@code [node/RANK] }).
 */
final class LogStream {

    static final int BACKLOG = 200;
    static final long POLL_MS = 100;
    static final int LINE_CHARS = 16 * 1024;
    private static final int BACKLOG_BYTES = 1 << 20;
    private static final long KEEPALIVE_NS = 15_000_000_000L;
    private static final Pattern PREFIX = Pattern.compile("^\\[[^/\\]]+/(\\d+)(?:#\\d+)?(?::err)?] ");

    private final Path log;
    private final Optional<Integer> rank;
    private final BooleanSupplier live;

    /** @param live whether the run still runs (asked after each read that found nothing new) */
    LogStream(Path log, Optional<Integer> rank, BooleanSupplier live) {
        this.log = log;
        this.rank = rank;
        this.live = live;
    }

    /** Sends events to {@code out} until the run ends or the reader goes (a write fails). */
    void send(OutputStream out) throws IOException {
        long at = backlog(out);
        ByteArrayOutputStream partial = new ByteArrayOutputStream();
        long quietSince = System.nanoTime();
        boolean ended = false;
        while (true) {
            long before = at;
            at = follow(at, partial, out);
            if (at != before) {
                quietSince = System.nanoTime();
            } else if (ended) {
                if (partial.size() > 0) {
                    line(partial.toString(StandardCharsets.UTF_8), out);
                }
                end(out);
                return;
            } else if (!live.getAsBoolean()) {
                ended = true; // one more read: what was written before the end
                continue;
            } else if (System.nanoTime() - quietSince > KEEPALIVE_NS) {
                out.write(": keepalive\n\n".getBytes(StandardCharsets.UTF_8));
                out.flush(); // a reader that went fails here
                quietSince = System.nanoTime();
            }
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** The event that says the run ended and its log is whole. */
    static void end(OutputStream out) throws IOException {
        out.write("event: end\ndata: \"\"\n\n".getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    /** Sends the last lines; the position after them. */
    private long backlog(OutputStream out) throws IOException {
        if (!Files.isRegularFile(log, LinkOption.NOFOLLOW_LINKS)) {
            out.write(": no log yet\n\n".getBytes(StandardCharsets.UTF_8));
            out.flush();
            return 0;
        }
        try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
            long end = f.length();
            long from = Math.max(0, end - BACKLOG_BYTES);
            byte[] buf = new byte[(int) (end - from)];
            f.seek(from);
            f.readFully(buf);
            int last = buf.length;
            while (last > 0 && buf[last - 1] != '\n') {
                last--; // a line being written is sent whole, later
            }
            List<String> lines = new ArrayList<>(new String(buf, 0, last, StandardCharsets.UTF_8).lines().toList());
            if (from > 0 && !lines.isEmpty()) {
                lines.remove(0); // cut
            }
            List<String> shown = lines.stream().filter(this::wanted).toList();
            for (String l : shown.subList(Math.max(0, shown.size() - BACKLOG), shown.size())) {
                line(l, out);
            }
            out.write("event: caught-up\ndata: \"\"\n\n".getBytes(StandardCharsets.UTF_8));
            out.flush();
            return from + last;
        }
    }

    /** Sends the whole lines written after {@code from}; the new position. */
    private long follow(long from, ByteArrayOutputStream partial, OutputStream out) throws IOException {
        if (!Files.isRegularFile(log, LinkOption.NOFOLLOW_LINKS)) {
            return from;
        }
        try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
            long end = f.length();
            if (end < from) {
                return end; // replaced by a shorter file: go on from its end
            }
            if (end == from) {
                return from;
            }
            f.seek(from);
            byte[] buf = new byte[(int) Math.min(end - from, 1 << 20)];
            f.readFully(buf);
            for (byte b : buf) {
                if (b == '\n') {
                    String l = partial.toString(StandardCharsets.UTF_8);
                    partial.reset();
                    if (wanted(l)) {
                        line(l, out);
                    }
                } else if (partial.size() < LINE_CHARS * 4) {
                    partial.write(b);
                }
            }
            out.flush();
            return from + buf.length;
        }
    }

    private boolean wanted(String line) {
        if (rank.isEmpty()) {
            return true;
        }
        Matcher m = PREFIX.matcher(line);
        return m.find() && Integer.parseInt(m.group(1)) == rank.get();
    }

    /** One line as an event: cut to {@value #LINE_CHARS} characters, made printable, as a JSON string. */
    static void line(String line, OutputStream out) throws IOException {
        String cut = line.length() > LINE_CHARS ? line.substring(0, LINE_CHARS) + " [line cut]" : line;
        out.write(("event: line\ndata: " + Json.MAPPER.writeValueAsString(Printable.line(cut)) + "\n\n").getBytes(StandardCharsets.UTF_8));
    }
}
