package org.runjob.preflight;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

import org.runjob.agent.NodeFacts;
import org.runjob.distribute.FileList;
import org.runjob.distribute.Shipped;
import org.runjob.launch.NodeSession;
import org.runjob.spec.NodeSpec;

/**
 * Distribution: the job's files go to each node as soon as that node passed its checks, through
 * its agent. Nodes that share a workdir (they report the same workdir token) take turns, so the
 * first one ready sends and the others find the files there; {@link #noteShared} then says so in
 * their cells.
 */
final class Shipping {

    private final List<FileList.Entry> entries;
    private final Consumer<String> progress;
    private final Map<String, Object> turns = new ConcurrentHashMap<>();
    /** Workdir token to the nodes that reported it, and which of them sent (the first). */
    private final Map<String, List<String>> byToken = new LinkedHashMap<>();
    private final Map<String, Shipped> done = new ConcurrentHashMap<>();

    Shipping(List<FileList.Entry> entries, Consumer<String> progress) {
        this.entries = List.copyOf(entries);
        this.progress = progress;
    }

    /** Ships to one node; empty when it failed (its workdir cell says why). */
    Optional<Shipped> ship(NodeSpec node, NodeSession session, NodeFacts facts, Map<Check, Cell> row) {
        String token = facts.get(NodeFacts.TOKEN).orElse("node:" + node.name());
        synchronized (turns.computeIfAbsent(token, t -> new Object())) {
            synchronized (byToken) {
                byToken.computeIfAbsent(token, t -> new ArrayList<>()).add(node.name());
            }
            try {
                Shipped shipped = entries.isEmpty() ? Shipped.NOTHING : session.ship(entries,
                        line -> progress.accept("runjob: " + node.name() + ": shipping " + line));
                done.put(node.name(), shipped);
                row.put(Check.WORKDIR, Cell.ok(shipped.summary()));
                return Optional.of(shipped);
            } catch (IOException e) {
                row.put(Check.WORKDIR, Cell.fail("shipping failed: " + e.getMessage()));
                return Optional.empty();
            }
        }
    }

    /** Names the nodes that share a workdir in their cells, in node order; the one that sent keeps its summary. */
    void noteShared(Map<String, Map<Check, Cell>> cells) {
        List<String> order = new ArrayList<>(cells.keySet());
        synchronized (byToken) {
            for (List<String> group : byToken.values()) {
                if (group.size() < 2) {
                    continue;
                }
                List<String> sorted = group.stream().sorted(java.util.Comparator.comparingInt(order::indexOf)).toList();
                String note = "workdir shared by " + String.join(", ", sorted) + (entries.isEmpty() ? "" : ": shipped once");
                String sender = group.stream().filter(done::containsKey).findFirst().orElse("");
                for (String node : group) {
                    Shipped s = done.get(node);
                    if (s == null) {
                        continue;
                    }
                    cells.get(node).put(Check.WORKDIR, Cell.ok(node.equals(sender) && !entries.isEmpty() ? s.summary() + "; " + note : note));
                }
            }
        }
    }
}
