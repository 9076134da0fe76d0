package org.runjob.runs;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.runjob.json.Json;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.QuarantineFile;
import org.runjob.run.RunIndex;

import tools.jackson.databind.JsonNode;

/**
 * The quarantines kept on the master nodes of this user's submitted runs: a submitted run's
 * coordinator quarantines in its own node's state, so {@code runjob nodes} here asks each master
 * node of a run submitted in the last {@value #DAYS} days ({@code runjob nodes -o json} there,
 * every node at once), and {@code --clear} ends the entry there too.
 */
public final class MasterQuarantines {

    static final int DAYS = 7;

    /** One master node's answer: its entries in force, or why it could not be asked. */
    public record Answer(String master, List<QuarantineFile.Entry> entries, String problem) {
    }

    /** What a master node's {@code --clear} removed: the lines it printed. */
    public record Cleared(String master, List<String> lines, String problem) {
    }

    private MasterQuarantines() {
    }

    /** Each master node's entries in force (or why it could not be asked), in the order of its latest run. */
    public static List<Answer> ask(Io io) {
        List<CompletableFuture<Answer>> asked = new ArrayList<>();
        for (RunIndex.Entry e : masters(io)) {
            asked.add(CompletableFuture.supplyAsync(() -> {
                ByteArrayOutputStream got = new ByteArrayOutputStream();
                ByteArrayOutputStream said = new ByteArrayOutputStream();
                int code = call(io, e, List.of("nodes", "--this-machine", "-o", "json"), got, said);
                if (code != ExitCode.OK) {
                    return new Answer(e.node().orElseThrow(), List.of(), firstLine(said, code));
                }
                List<QuarantineFile.Entry> entries = new ArrayList<>();
                try {
                    for (JsonNode o : Json.read(got.toString(StandardCharsets.UTF_8))) {
                        QuarantineFile.Entry.of(o).filter(x -> x.activeAt(io.clock().instant())).ifPresent(entries::add);
                    }
                } catch (RuntimeException ex) {
                    return new Answer(e.node().orElseThrow(), List.of(), "its answer was not a list of entries");
                }
                return new Answer(e.node().orElseThrow(), entries, null);
            }));
        }
        return asked.stream().map(CompletableFuture::join).toList();
    }

    /** Ends the quarantine {@code nameOrMachine} names (null: every one) on each master node. */
    public static List<Cleared> clear(Io io, String nameOrMachine) {
        List<String> command = nameOrMachine == null ? List.of("nodes", "--this-machine", "--clear-all")
                : List.of("nodes", "--this-machine", "--clear", nameOrMachine);
        List<CompletableFuture<Cleared>> asked = new ArrayList<>();
        for (RunIndex.Entry e : masters(io)) {
            asked.add(CompletableFuture.supplyAsync(() -> {
                ByteArrayOutputStream got = new ByteArrayOutputStream();
                ByteArrayOutputStream said = new ByteArrayOutputStream();
                int code = call(io, e, command, got, said);
                List<String> lines = got.toString(StandardCharsets.UTF_8).lines().filter(l -> l.startsWith("cleared ")).toList();
                String problem = code == ExitCode.OK || code == ExitCode.INVALID ? null : firstLine(said, code);
                return new Cleared(e.node().orElseThrow(), lines, problem);
            }));
        }
        return asked.stream().map(CompletableFuture::join).toList();
    }

    /** One submitted run per master node (its latest), of the runs submitted in the last {@value #DAYS} days. */
    private static List<RunIndex.Entry> masters(Io io) {
        Instant since = io.clock().instant().minus(Duration.ofDays(DAYS));
        Map<String, RunIndex.Entry> byMaster = new LinkedHashMap<>();
        for (RunIndex.Entry e : RunIndex.list(io.env())) {
            if (!e.isSubmitted() || e.reach().isEmpty()) {
                continue;
            }
            Instant started;
            try {
                started = Instant.parse(e.started());
            } catch (RuntimeException ex) {
                continue;
            }
            if (started.isAfter(since)) {
                // the master as it is reached: its node entry in the run's reach (name, host, port, user)
                String key = Json.compact(e.reach().get().path("nodes"));
                RunIndex.Entry known = byMaster.get(key);
                if (known == null || known.started().compareTo(e.started()) < 0) {
                    byMaster.put(key, e);
                }
            }
        }
        return List.copyOf(byMaster.values());
    }

    private static int call(Io io, RunIndex.Entry e, List<String> command, ByteArrayOutputStream out, ByteArrayOutputStream err) {
        PrintStream quietOut = new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8);
        PrintStream errors = new PrintStream(err, true, StandardCharsets.UTF_8);
        Io asking = new Io(quietOut, errors, io.env(), io.clock(), io.random(), false, io.interrupts());
        try {
            return Remote.call(asking, e, command, in -> out.write(in.readNBytes(Json.MAX_FILE_BYTES)));
        } catch (IOException | RuntimeException ex) {
            errors.println(ex.getMessage());
            return ExitCode.PREFLIGHT_FAILED;
        }
    }

    private static String firstLine(ByteArrayOutputStream said, int code) {
        return said.toString(StandardCharsets.UTF_8).lines().map(l -> l.replaceFirst("^runjob: ", "")).findFirst().orElse("exit " + code);
    }
}
