package org.runjob.logs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;

import org.runjob.json.Json;

import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Names the ranks that fall behind, from what the run reports: the step marks of the workers'
 * metrics (a numeric {@code step}, tagged with when its agent read it) and each rank's GPU
 * utilization from the samples. Every window ({@code window}), each rank's step time is the time
 * its last marks in the window span over the steps they advance (a rank that marked no step in
 * the window but did before: at least the time since its last mark); a rank is slow in that window
 * when its step time is more than {@code pct} % above the median of the other ranks', and low when
 * its GPU utilization is under half the others' median while that median is at least 20 %. A
 * rank slow or low in {@value #WINDOWS} windows in a row is a straggler, until a window in which it
 * is neither: each start and end is said once ({@code say}) and kept in {@code stragglers.json}.
 *
 * <p>What it cannot see: inside one DDP job every rank waits at the all-reduce, so step times are
 * equal and a slow GPU shows only as the others' idle time; there its GPU utilization (high where
 * the others' is low) and a data-loader wait the worker reports are what tell.
 */
public final class StragglerWatch {

    /** Slow windows in a row before a rank is named. */
    static final int WINDOWS = 3;
    static final double LOW_UTILIZATION_FLOOR = 20;

    private final Path file;
    private final double pct;
    private final Duration window;
    private final Consumer<String> say;
    private final Map<Integer, Deque<Mark>> marks = new TreeMap<>();
    private final Map<Integer, String> nodes = new TreeMap<>();
    private final Map<Integer, Double> utilization = new TreeMap<>();
    private final Map<Integer, Integer> behind = new TreeMap<>();
    private final Map<Integer, Episode> open = new TreeMap<>();
    private final List<Episode> ended = new ArrayList<>();
    /** The ranks whose worker ended in this attempt: what still arrives of them (a late metrics line, a GPU sample) is not judged. */
    private final Set<Integer> done = new HashSet<>();
    private Instant windowEnd;

    private record Mark(Instant time, double step) {
    }

    /** A rank named a straggler from {@code from} until {@code to} (empty while it still is), and why. */
    public record Episode(int rank, String node, Instant from, Optional<Instant> to, String why) {
    }

    public StragglerWatch(Path folder, double pct, Duration window, Consumer<String> say) {
        this.file = folder.resolve(MetricsLog.DIR).resolve("stragglers.json");
        this.pct = pct;
        this.window = window;
        this.say = say;
    }

    void step(int rank, String node, Instant time, double step) {
        if (done.contains(rank)) {
            return;
        }
        nodes.put(rank, node);
        Deque<Mark> m = marks.computeIfAbsent(rank, r -> new ArrayDeque<>());
        if (!m.isEmpty() && m.peekLast().time().equals(time)) {
            m.removeLast(); // lines read at one time (one poll of the agent) keep their last step: marks stay one per poll
        }
        m.addLast(new Mark(time, step));
        while (m.size() > 2 && m.peekFirst().time().isBefore(time.minus(window.multipliedBy(2)))) {
            m.removeFirst();
        }
    }

    void utilization(int rank, String node, double percent) {
        if (done.contains(rank)) {
            return;
        }
        nodes.putIfAbsent(rank, node);
        utilization.put(rank, percent);
    }

    /**
     * The rank's worker ended: it is judged no more in this attempt (its marks stop, which is not
     * falling behind, and what of it arrives later is dropped), and an episode it is in ends now.
     */
    void ended(int rank, Instant now) {
        done.add(rank);
        marks.remove(rank);
        utilization.remove(rank);
        behind.remove(rank);
        Episode e = open.remove(rank);
        if (e != null) {
            ended.add(new Episode(rank, e.node(), e.from(), Optional.of(now), e.why()));
            write();
        }
        nodes.remove(rank);
    }

    /** A new attempt begins: every rank runs again and is judged from its new marks. */
    void attempt() {
        done.clear();
    }

    /** Judges the window that ended, if one did by {@code now}. */
    public void tick(Instant now) {
        if (windowEnd == null) {
            windowEnd = now.plus(window);
            return;
        }
        if (now.isBefore(windowEnd)) {
            return;
        }
        judge(windowEnd);
        windowEnd = now.plus(window);
    }

    private void judge(Instant end) {
        Map<Integer, Double> stepTimes = new TreeMap<>();
        marks.forEach((rank, m) -> stepTime(m, end).ifPresent(t -> stepTimes.put(rank, t)));
        boolean changed = false;
        for (int rank : nodes.keySet()) {
            if (!judged(rank, stepTimes)) {
                continue; // nothing to compare it with in this window: as it was
            }
            Optional<String> why = behindWhy(rank, stepTimes);
            int n = why.isPresent() ? behind.getOrDefault(rank, 0) + 1 : 0;
            behind.put(rank, n);
            if (n >= WINDOWS && !open.containsKey(rank)) {
                open.put(rank, new Episode(rank, nodes.get(rank), end, Optional.empty(), why.get()));
                say.accept("runjob: rank " + rank + " on " + nodes.get(rank) + " is a straggler: " + why.get() + " (" + WINDOWS
                        + " windows of " + seconds(window) + " in a row)");
                changed = true;
            } else if (n == 0 && open.containsKey(rank)) {
                Episode e = open.remove(rank);
                ended.add(new Episode(rank, e.node(), e.from(), Optional.of(end), e.why()));
                say.accept("runjob: rank " + rank + " on " + e.node() + " is no longer a straggler"
                        + Optional.ofNullable(stepTimes.get(rank)).map(t -> " (step time " + seconds(t) + ")").orElse(""));
                changed = true;
            }
        }
        if (changed) {
            write();
        }
    }

    /** True when the window has a step time of the rank and another's, or a GPU utilization of both. */
    private boolean judged(int rank, Map<Integer, Double> stepTimes) {
        boolean steps = stepTimes.containsKey(rank) && stepTimes.keySet().stream().anyMatch(r -> r != rank);
        boolean gpus = utilization.containsKey(rank) && utilization.keySet().stream().anyMatch(r -> r != rank);
        return steps || gpus;
    }

    /** Why {@code rank} is behind in this window, if it is. */
    private Optional<String> behindWhy(int rank, Map<Integer, Double> stepTimes) {
        Double own = stepTimes.get(rank);
        List<Double> others = stepTimes.entrySet().stream().filter(e -> e.getKey() != rank).map(Map.Entry::getValue).toList();
        if (own != null && !others.isEmpty()) {
            double median = median(others);
            if (median > 0 && own > median * (1 + pct / 100)) {
                return Optional.of(String.format(Locale.ROOT, "its step time %s is %.0f %% above the other ranks' median %s",
                        seconds(own), (own / median - 1) * 100, seconds(median)));
            }
        }
        Double util = utilization.get(rank);
        List<Double> peers = utilization.entrySet().stream().filter(e -> e.getKey() != rank).map(Map.Entry::getValue).toList();
        if (util != null && !peers.isEmpty()) {
            double median = median(peers);
            if (median >= LOW_UTILIZATION_FLOOR && util < median / 2) {
                return Optional.of(String.format(Locale.ROOT, "its GPU utilization %.0f %% is under half the other ranks' median %.0f %%",
                        util, median));
            }
        }
        return Optional.empty();
    }

    /** The rank's step time in the window ending at {@code end}: seconds per step over its marks in it. */
    private Optional<Double> stepTime(Deque<Mark> m, Instant end) {
        Instant start = end.minus(window);
        List<Mark> in = m.stream().filter(k -> k.time().isAfter(start) && !k.time().isAfter(end)).toList();
        if (in.size() >= 2) {
            Mark first = in.get(0);
            Mark last = in.get(in.size() - 1);
            double steps = last.step() - first.step();
            if (steps > 0) {
                return Optional.of(Duration.between(first.time(), last.time()).toNanos() / 1e9 / steps);
            }
        }
        Optional<Mark> before = m.stream().filter(k -> !k.time().isAfter(end)).reduce((a, b) -> b);
        if (before.isPresent() && in.size() < 2) {
            // no step advanced in this window: at least as long as since its last mark
            return Optional.of(Duration.between(before.get().time(), end).toNanos() / 1e9);
        }
        return Optional.empty();
    }

    private static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    private static String seconds(double s) {
        return String.format(Locale.ROOT, "%.2f s", s);
    }

    private static String seconds(Duration d) {
        return seconds(d.toNanos() / 1e9);
    }

    /** Every episode so far, the open ones last, in rank order within each. */
    public List<Episode> episodes() {
        List<Episode> all = new ArrayList<>(ended);
        all.addAll(open.values());
        return all;
    }

    /** The episodes as JSON: {@code [{"rank", "node", "from", "to" (null while it lasts), "why"}]}. */
    public ArrayNode json() {
        ArrayNode list = Json.MAPPER.createArrayNode();
        for (Episode e : episodes()) {
            ObjectNode o = list.addObject().put("rank", e.rank()).put("node", e.node()).put("from", e.from().toString());
            if (e.to().isPresent()) {
                o.put("to", e.to().get().toString());
            } else {
                o.putNull("to");
            }
            o.put("why", e.why());
        }
        return list;
    }

    /** stragglers.json, replaced whole: what {@code top} and {@code status} show while the run lasts. */
    private void write() {
        try {
            Files.createDirectories(file.getParent());
            Path tmp = file.resolveSibling(".stragglers.json.tmp");
            Files.writeString(tmp, Json.pretty(Json.object().set("stragglers", json())) + "\n");
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            // the next change tries again; the console said it already
        }
    }
}
