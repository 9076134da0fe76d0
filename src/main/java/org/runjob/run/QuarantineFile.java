package org.runjob.run;

import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

import org.runjob.json.Json;
import org.runjob.launch.Quarantine;
import org.runjob.protocol.Printable;
import org.runjob.spec.NodeSpec;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * This user's quarantined nodes: one small file per machine in
 * {@code ${XDG_STATE_HOME:-~/.local/state}/runjob/quarantine/MACHINE.json} (directory mode 700,
 * files replaced whole, never written through a link), so runs at once never lose each other's
 * entries. A machine is the node's host and port ({@link org.runjob.spec.NodeAddress#machine});
 * this machine is never quarantined. An entry ends at its {@code until}, or when
 * {@code runjob nodes --clear} removes it.
 */
public final class QuarantineFile implements Quarantine {

    /** One quarantined machine: the node name it had, why, since and until when, and the run that put it there. */
    public record Entry(String machine, String node, String reason, Instant since, Instant until, String runId, String job) {

        public boolean activeAt(Instant now) {
            return now.isBefore(until);
        }

        /** The entry as its file holds it, and as {@code runjob nodes -o json} prints it. */
        public ObjectNode json() {
            return Json.object().put("machine", machine).put("node", node).put("reason", reason).put("since", since.toString())
                    .put("until", until.toString()).put("run_id", runId).put("job", job);
        }

        /** The entry {@link #json} wrote; empty when a field is missing or damaged. */
        public static Optional<Entry> of(JsonNode o) {
            try {
                return Optional.of(new Entry(Printable.line(o.path("machine").asString("")), Printable.line(o.path("node").asString("")),
                        Printable.text(o.path("reason").asString("")),
                        Instant.parse(o.path("since").asString("")).truncatedTo(ChronoUnit.SECONDS),
                        Instant.parse(o.path("until").asString("")).truncatedTo(ChronoUnit.SECONDS),
                        o.path("run_id").asString(""), o.path("job").asString("")));
            } catch (RuntimeException ex) {
                return Optional.empty();
            }
        }

        /** Whether {@code nameOrMachine} names this entry: its node's name or its machine. */
        public boolean named(String nameOrMachine) {
            return node.equals(nameOrMachine) || machine.equals(nameOrMachine);
        }
    }

    private final Map<String, String> env;
    private final Clock clock;
    private final String runId;
    private final String job;
    private final int seconds;
    private final Consumer<String> warn;

    /**
     * @param seconds how long an entry lasts ({@code failure.quarantine_s}); 0: nothing is quarantined
     * @param warn    where a node quarantined, or an entry that cannot be written, is said
     */
    public QuarantineFile(Map<String, String> env, Clock clock, String runId, String job, int seconds, Consumer<String> warn) {
        this.env = Map.copyOf(env);
        this.clock = clock;
        this.runId = runId;
        this.job = job;
        this.seconds = seconds;
        this.warn = warn;
    }

    @Override
    public boolean add(NodeSpec node, String reason) {
        Optional<String> machine = node.address().machine();
        if (seconds == 0 || machine.isEmpty()) {
            return false;
        }
        Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
        Entry e = new Entry(machine.get(), node.name(), reason, now, now.plusSeconds(seconds), runId, job);
        try {
            write(env, e);
            warn.accept("node " + node.name() + " (" + machine.get() + ") is quarantined until " + e.until() + " (failure.quarantine_s "
                    + seconds + "): " + reason);
            return true;
        } catch (IOException | RuntimeException ex) {
            warn.accept("cannot quarantine node " + node.name() + " in " + dir(env) + ": " + ex.getMessage());
            return false;
        }
    }

    public static Path dir(Map<String, String> env) {
        return RunIndex.dir(env).resolveSibling("quarantine");
    }

    /** Why the quarantine's directory is not used (another user's, or open to others); empty when it is, or is not there yet. */
    public static Optional<String> problem(Map<String, String> env) {
        return Owned.privateDir(dir(env));
    }

    /** Every entry still in force at {@code now}, by machine. */
    public static List<Entry> active(Map<String, String> env, Instant now) {
        return all(env).stream().filter(e -> e.activeAt(now)).toList();
    }

    /** The entry in force at {@code now} for {@code node}'s machine. */
    public static Optional<Entry> of(List<Entry> active, NodeSpec node) {
        Optional<String> machine = node.address().machine();
        return machine.flatMap(m -> active.stream().filter(e -> e.machine().equals(m)).findFirst());
    }

    /** Removes every entry (in force or ended) that {@code nameOrMachine} names; returns them. */
    public static List<Entry> clear(Map<String, String> env, String nameOrMachine) throws IOException {
        List<Entry> removed = new ArrayList<>();
        for (Entry e : all(env)) {
            if (nameOrMachine == null || e.named(nameOrMachine)) {
                Files.deleteIfExists(dir(env).resolve(fileName(e.machine())));
                removed.add(e);
            }
        }
        return removed;
    }

    /**
     * Takes in entries kept elsewhere (the launching machine's, sent with a submitted run): each
     * one in force whose machine has no entry here, or one that ends sooner, is written.
     *
     * @return the entries written
     */
    public static List<Entry> merge(Map<String, String> env, List<Entry> entries, Instant now) throws IOException {
        List<Entry> here = all(env);
        List<Entry> written = new ArrayList<>();
        for (Entry e : entries) {
            if (e.activeAt(now) && e.machine().matches("[^/\\s]+") && here.stream().noneMatch(h -> h.machine().equals(e.machine())
                    && !h.until().isBefore(e.until()))) {
                write(env, e);
                written.add(e);
            }
        }
        return written;
    }

    private static String fileName(String machine) {
        return URLEncoder.encode(machine, StandardCharsets.UTF_8) + ".json";
    }

    private static void write(Map<String, String> env, Entry e) throws IOException {
        PrivateRecords.replace(dir(env), fileName(e.machine()), e.json());
    }

    /** Every entry, ended ones too, by machine; damaged ones are skipped. */
    private static List<Entry> all(Map<String, String> env) {
        List<Entry> out = new ArrayList<>();
        for (JsonNode o : PrivateRecords.read(dir(env))) {
            Entry.of(o).ifPresent(out::add); // a damaged entry is skipped
        }
        out.sort(Comparator.comparing(Entry::machine));
        return out;
    }
}
