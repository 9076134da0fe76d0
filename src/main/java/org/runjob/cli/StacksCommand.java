package org.runjob.cli;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.runjob.json.Json;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.RankSelection;
import org.runjob.runs.RunRecords;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code runjob stacks RUN [--ranks R] [--native]}: every thread's stack of every running rank, the run
 * undisturbed. It asks the run's runjob through the run folder ({@code stacks/requests/ID}, which
 * runjob polls), waits for {@code stacks/ID/summary.txt}, and prints each rank's file under its
 * {@code [node/rank]} header, then one line per rank ({@code -o json}: {@code folder}, {@code ranks}
 * with rank, node and stacks, {@code summary}). The capture stays in the run folder. A submitted
 * run is asked on its machine.
 */
@Command(name = "stacks", mixinStandardHelpOptions = true,
        description = "Print every thread's stack of every rank of a running run; the run goes on. Saved under stacks/ in the run folder.")
final class StacksCommand implements Callable<Integer> {

    static final long POLL_MS = 100;
    private static final Pattern RANK_FILE = Pattern.compile("rank-(\\d+)\\.txt");
    private static final Pattern SUMMARY_LINE = Pattern.compile("^rank (\\d+):");
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

    private final Io io;

    @Parameters(index = "0", paramLabel = "RUN", description = "A run id, a unique prefix of one, last, or a run folder.")
    String run;

    @Option(names = "--ranks", split = ",", paramLabel = "RANKS", converter = RankParts.class, description = "Only these ranks, e.g. --ranks 0-3,7.")
    List<String> ranks = new ArrayList<>();

    @Option(names = "--native", description = "Also py-spy's native frames of every Python process, where py-spy is on the node's PATH.")
    boolean nativeFrames;

    @Option(names = "--wait", paramLabel = "SECONDS", defaultValue = "30", description = "How long to wait for the stacks (default: ${DEFAULT-VALUE}).")
    int waitSeconds;

    @Mixin
    RunsOptions options;

    @Spec
    CommandSpec spec;

    StacksCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() throws Exception {
        RankSelection selection = RankSelection.parse(ranks);
        var found = options.find(io, run);
        if (found.isEmpty()) {
            return ExitCode.INVALID;
        }
        if (found.get() instanceof RunsOptions.Submitted s) {
            return Forward.call(io, spec, s.entry());
        }
        RunRecords.Run r = ((RunsOptions.Here) found.get()).run();
        if (!r.live()) {
            io.err().println("runjob: run " + r.runId() + " is not running (" + r.state() + "): it has no stacks to take");
            return ExitCode.INVALID;
        }
        String id = "request-" + ZonedDateTime.now(ZoneOffset.UTC).format(STAMP) + "-" + HexFormat.of().formatHex(new SecureRandom().generateSeed(3));
        Path stacks = r.folder().resolve("stacks");
        Path requests = stacks.resolve("requests");
        Files.createDirectories(requests);
        // written aside and renamed into place: runjob reads a request whole or not at all
        Path writing = requests.resolve("." + id);
        Files.writeString(writing, nativeFrames ? "native\n" : "", StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        Files.move(writing, requests.resolve(id), StandardCopyOption.ATOMIC_MOVE);
        Path capture = stacks.resolve(id);
        long deadline = System.nanoTime() + Duration.ofSeconds(waitSeconds).toNanos();
        while (!Files.isRegularFile(capture.resolve("summary.txt"))) {
            if (!RunRecords.read(r.folder(), io.env()).live()) {
                io.err().println("runjob: run " + r.runId() + " ended before its stacks were taken");
                return ExitCode.WORKER_FAILED;
            }
            if (System.nanoTime() > deadline) {
                io.err().println("runjob: run " + r.runId() + ": its runjob took no stacks within " + waitSeconds + " s"
                        + " (a runjob older than this one does not take them)");
                Files.deleteIfExists(requests.resolve(id));
                return ExitCode.WORKER_FAILED;
            }
            Thread.sleep(POLL_MS);
        }
        print(capture, selection);
        return ExitCode.OK;
    }

    private void print(Path capture, RankSelection selection) throws IOException {
        Map<Integer, Path> files = new TreeMap<>();
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(capture)) {
            for (Path f : dir) {
                Matcher m = RANK_FILE.matcher(f.getFileName().toString());
                if (m.matches() && (selection.ranks().isEmpty() || selection.ranks().contains(Integer.parseInt(m.group(1))))) {
                    files.put(Integer.parseInt(m.group(1)), f);
                }
            }
        }
        List<String> summary = new ArrayList<>();
        for (String line : Files.readAllLines(capture.resolve("summary.txt"))) {
            Matcher m = SUMMARY_LINE.matcher(line);
            if (selection.ranks().isEmpty() || (m.find() && selection.ranks().contains(Integer.parseInt(m.group(1))))) {
                summary.add(line);
            }
        }
        if (options.output == JobOptions.Output.json) {
            ObjectNode root = Json.object().put("folder", capture.toString());
            ArrayNode ranks = root.putArray("ranks");
            for (Map.Entry<Integer, Path> f : files.entrySet()) {
                String text = Files.readString(f.getValue());
                int nl = text.indexOf('\n');
                ranks.addObject().put("rank", f.getKey()).put("node", text.substring(1, Math.max(1, text.indexOf('/'))))
                        .put("stacks", nl < 0 ? "" : text.substring(nl + 1));
            }
            summary.forEach(root.putArray("summary")::add);
            io.out().println(Json.pretty(root));
            io.out().flush();
            return;
        }
        for (Path f : files.values()) {
            io.out().print(Files.readString(f));
            io.out().println();
        }
        io.out().println("each rank's main thread, innermost frame first:");
        summary.forEach(line -> io.out().println("  " + line));
        io.out().println("saved in " + capture);
        io.out().flush();
    }
}
