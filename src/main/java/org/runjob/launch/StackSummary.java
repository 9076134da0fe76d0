package org.runjob.launch;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * One line per rank from a capture's stacks (the agent's text: {@code process PID (COMM), main
 * thread 0x...}, then faulthandler's dump): the innermost frame of the main thread of the rank's
 * first Python process, and the innermost frame of the job's own code when that is another, e.g.
 * {@code rank 0: all_reduce (distributed_c10d.py:1536) <- train (train.py:15)}.
 *
 * <p>The suspects: when some ranks wait in {@code torch.distributed} and others do not, the others
 * (they are what the collective waits for); otherwise the ranks whose innermost frame differs
 * from that of a strict majority. None when nothing stands out.
 *
 * @param lines    one per rank, by rank, suspects marked
 * @param suspects the ranks that differ from the others
 */
public record StackSummary(List<String> lines, Set<Integer> suspects) {

    private static final Pattern PROCESS = Pattern.compile("^process \\d+ \\(.*\\), main thread (0x[0-9a-f]+)$");
    private static final Pattern JVM = Pattern.compile("^process \\d+ \\(.*\\), thread dump$");
    private static final Pattern JAVA_FRAME = Pattern.compile("^\\s+at (?:[\\w$.]+\\.)?([\\w$]+\\.[\\w$<>]+)\\((?:[^/)]*/)?([^:)]*)(?::(\\d+))?\\)$");
    private static final Pattern JAVA_LIBRARY = Pattern.compile("^\\s+at (java|javax|jdk|sun|com\\.sun)\\..*");
    private static final Pattern THREAD = Pattern.compile("^(?:Current thread|Thread) (0x[0-9a-f]+) \\(most recent call first\\):$");
    private static final Pattern FRAME = Pattern.compile("^\\s+File \"(.*)\", line (\\d+) in (.*)$");
    private static final String COLLECTIVE = "torch/distributed/";

    public StackSummary {
        lines = List.copyOf(lines);
        suspects = Set.copyOf(suspects);
    }

    /** A frame: its function, file and line (0: none, a native method), and whether it is library code. */
    record Frame(String function, String file, int line, boolean library) {
        Frame(String function, String file, int line) {
            this(function, file, line, file.contains("/site-packages/") || file.contains("/dist-packages/") || file.contains("/lib/python")
                    || file.startsWith("<"));
        }

        String shown() {
            return function + " (" + file.substring(file.lastIndexOf('/') + 1) + (line > 0 ? ":" + line : "") + ")";
        }
    }

    /** @param texts each rank's capture text, by rank */
    static StackSummary of(Map<Integer, String> texts) {
        Map<Integer, List<Frame>> mains = new LinkedHashMap<>();
        new TreeMap<>(texts).forEach((rank, text) -> mains.put(rank, mainThread(text)));
        Set<Integer> suspects = suspects(mains);
        List<String> lines = new ArrayList<>();
        mains.forEach((rank, frames) -> {
            String line = "rank " + rank + ": " + (frames.isEmpty() ? firstLine(texts.get(rank)) : shown(frames));
            if (suspects.contains(rank)) {
                line += "   <- differs from the others";
            }
            lines.add(line);
        });
        return new StackSummary(lines, suspects);
    }

    private static String shown(List<Frame> frames) {
        Frame inner = frames.get(0);
        Optional<Frame> own = frames.stream().filter(f -> !f.library()).findFirst();
        return inner.shown() + own.filter(f -> f != inner).map(f -> " <- " + f.shown()).orElse("");
    }

    private static String firstLine(String text) {
        String first = text == null ? "" : text.lines().findFirst().orElse("").strip();
        return first.isEmpty() ? "no stack" : first;
    }

    private static Set<Integer> suspects(Map<Integer, List<Frame>> mains) {
        Map<Integer, List<Frame>> known = mains.entrySet().stream().filter(e -> !e.getValue().isEmpty())
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
        if (known.size() < 2) {
            return Set.of();
        }
        Set<Integer> waiting = known.entrySet().stream().filter(e -> e.getValue().stream().anyMatch(f -> f.file().contains(COLLECTIVE)))
                .map(Map.Entry::getKey).collect(Collectors.toCollection(TreeSet::new));
        if (!waiting.isEmpty() && waiting.size() < known.size()) {
            Set<Integer> others = new TreeSet<>(known.keySet());
            others.removeAll(waiting);
            return others;
        }
        Map<Frame, List<Integer>> byInner = known.entrySet().stream()
                .collect(Collectors.groupingBy(e -> e.getValue().get(0), Collectors.mapping(Map.Entry::getKey, Collectors.toList())));
        Optional<Frame> majority = byInner.entrySet().stream().filter(e -> e.getValue().size() * 2 > known.size())
                .map(Map.Entry::getKey).findFirst();
        if (majority.isEmpty() || byInner.size() == 1) {
            return Set.of();
        }
        return known.entrySet().stream().filter(e -> !e.getValue().get(0).equals(majority.get())).map(Map.Entry::getKey)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** The frames of the main thread of the text's first process, innermost first; empty when there are none. */
    static List<Frame> mainThread(String text) {
        if (text.lines().findFirst().filter(l -> JVM.matcher(l).matches()).isPresent()) {
            return javaMain(text);
        }
        Map<String, List<Frame>> threads = new LinkedHashMap<>();
        String main = null;
        List<Frame> current = null;
        int processes = 0;
        for (String line : text.split("\n")) {
            Matcher m;
            if ((m = PROCESS.matcher(line)).matches()) {
                if (++processes > 1) {
                    break;
                }
                main = m.group(1);
            } else if ((m = THREAD.matcher(line)).matches()) {
                current = threads.computeIfAbsent(m.group(1), k -> new ArrayList<>());
            } else if (current != null && (m = FRAME.matcher(line)).matches()) {
                current.add(new Frame(m.group(3), m.group(1), Integer.parseInt(m.group(2))));
            }
        }
        if (threads.isEmpty()) {
            return List.of();
        }
        List<Frame> frames = main != null && threads.containsKey(main) ? threads.get(main) : new ArrayList<>(threads.values()).get(threads.size() - 1);
        return List.copyOf(frames);
    }

    /** A HotSpot thread dump's {@code "main"} thread, innermost first: {@code Train.stuckHere (Train.java:7)}. */
    private static List<Frame> javaMain(String text) {
        List<Frame> frames = new ArrayList<>();
        boolean inMain = false;
        for (String line : text.split("\n")) {
            if (line.startsWith("\"")) {
                if (inMain) {
                    break;
                }
                inMain = line.startsWith("\"main\" ");
            } else if (inMain) {
                Matcher m = JAVA_FRAME.matcher(line);
                if (m.matches()) {
                    frames.add(new Frame(m.group(1), m.group(2), m.group(3) == null ? 0 : Integer.parseInt(m.group(3)),
                            JAVA_LIBRARY.matcher(line).matches()));
                }
            }
        }
        return List.copyOf(frames);
    }
}
