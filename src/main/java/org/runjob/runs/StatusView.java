package org.runjob.runs;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.runjob.logs.OutputRouter;
import org.runjob.report.Table;

import tools.jackson.databind.JsonNode;

/**
 * What {@code runjob status} shows of a run: per rank its node, state, process id on its node, how long ago it last
 * printed, and its last line (read from its rank file in the run folder, cut to fit); a running
 * rank silent far longer than the freshest one is marked {@code *} (at least
 * {@value #SILENT_S} s more, and three times as long).
 */
public final class StatusView {

    static final long SILENT_S = 10;
    static final int LINE_WIDTH = 48;
    private static final int TAIL_BYTES = 8192;

    private StatusView() {
    }

    /** One rank's row. */
    public record Row(String node, int rank, String state, String pid, Optional<Long> silentSeconds, String lastLine, boolean silent) {
    }

    public static List<Row> rows(RunRecords.Run r, Instant now) {
        // a run whose runjob is gone cannot say what its ranks do: their last recorded state is not news
        boolean dead = r.state().equals("dead");
        int attempt = r.status().map(s -> s.path("attempt").asInt()).orElse(0);
        List<JsonNode> ranks = r.status().map(s -> s.path("ranks").valueStream().toList()).orElse(List.of());
        List<Optional<Long>> silence = ranks.stream().map(k -> seconds(k.path("last_output").asString(null), now)).toList();
        long freshest = Long.MAX_VALUE;
        for (int i = 0; i < ranks.size(); i++) {
            if (!dead && ranks.get(i).path("state").asString("").equals("running") && silence.get(i).isPresent()) {
                freshest = Math.min(freshest, silence.get(i).get());
            }
        }
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < ranks.size(); i++) {
            JsonNode k = ranks.get(i);
            int rank = k.path("rank").asInt();
            String state = dead ? "unknown" : k.path("state").asString("");
            Optional<Long> s = silence.get(i);
            boolean silent = state.equals("running") && s.isPresent() && freshest != Long.MAX_VALUE
                    && s.get() >= freshest + SILENT_S && s.get() >= 3 * Math.max(1, freshest);
            String pid = dead || !k.path("pid").isNumber() ? "-" : k.path("pid").asString();
            rows.add(new Row(k.path("node").asString(""), rank, state, pid, s, lastLine(r.folder().resolve(OutputRouter.rankFileName(rank, attempt))), silent));
        }
        return rows;
    }

    /** The table, then the mark's meaning when a rank has it. */
    public static List<String> text(String runId, List<Row> rows) {
        List<String> out = new ArrayList<>();
        if (rows.isEmpty()) {
            return out; // no rank started (queued, withdrawn, refused): no table
        }
        Table t = Table.of("%-16s %5s  %-10s  %8s  %-12s  %s", "node", "rank", "state", "pid", "last output", "last line");
        for (Row x : rows) {
            t.row(x.node(), x.rank(), x.state(), x.pid(), x.silentSeconds().map(StatusView::age).orElse("-") + (x.silent() ? " *" : ""), x.lastLine());
        }
        out.addAll(t.lines());
        if (rows.stream().anyMatch(Row::silent)) {
            out.add("* silent far longer than the other ranks: runjob stacks " + runId + " shows where every rank is");
        }
        return out;
    }

    /** "12 s ago", "4 min ago", "3 h ago", "2 d ago". */
    static String age(long s) {
        return s < 120 ? s + " s ago" : s < 7200 ? s / 60 + " min ago" : s < 172_800 ? s / 3600 + " h ago" : s / 86_400 + " d ago";
    }

    /** Whole seconds from {@code timestamp} (ISO-8601) to {@code now}, at least 0; empty without one or for one that does not parse. */
    static Optional<Long> seconds(String timestamp, Instant now) {
        if (timestamp == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(Math.max(0, Duration.between(Instant.parse(timestamp), now).toSeconds()));
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    /** The file's last non-blank line, control characters as spaces, cut to {@value #LINE_WIDTH} columns; "" when none. */
    static String lastLine(Path file) {
        List<String> lines = tail(file, TAIL_BYTES).lines().map(l -> l.replaceAll("\\p{Cntrl}", " ").strip()).filter(l -> !l.isEmpty()).toList();
        if (lines.isEmpty()) {
            return "";
        }
        String last = lines.get(lines.size() - 1);
        return last.length() <= LINE_WIDTH ? last : last.substring(0, LINE_WIDTH - 3) + "...";
    }

    /** The file's last {@code bytes} bytes (all of a shorter file) as UTF-8; "" when it cannot be read. */
    public static String tail(Path file, int bytes) {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            long from = Math.max(0, f.length() - bytes);
            byte[] read = new byte[(int) (f.length() - from)];
            f.seek(from);
            f.readFully(read);
            return new String(read, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
