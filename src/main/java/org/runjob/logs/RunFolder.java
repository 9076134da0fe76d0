package org.runjob.logs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;

import org.runjob.json.Json;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The record of one run: {@code LOGS_DIR/JOB/RUN_ID/} with {@code job.yaml} (the job after
 * extends, interpolation and --set), {@code plan.json}, {@code command.txt}, the per-rank logs,
 * {@code all.log}, {@code summary.json} and {@code runjob.log}; while the run lives, {@code status.json}
 * (rewritten whole after changes, a burst at once: state, attempt, each rank's state and last output, and the
 * {@link Coordinator} that runs it).
 */
public final class RunFolder {

    /** The run's end: its result, attempts, exit codes and what was observed; written once it ended. */
    public static final String SUMMARY = "summary.json";
    /** While the run lives: its state, attempt, ranks and the runjob that runs it. */
    public static final String STATUS = "status.json";
    /** What the run's runjob logged. */
    public static final String RUNJOB_LOG = "runjob.log";
    /** Every rank's output, prefixed with its node and rank, as the console showed it. */
    public static final String ALL_LOG = "all.log";
    /** A detached or submitted run's console: runjob's own lines among the workers'. */
    public static final String CONSOLE_LOG = "console.log";

    private static final JsonMapper JSON = Json.MAPPER;

    /** The log a reader of the run folder {@code folder} is shown: its console when it has one (a detached or submitted run), else all.log. */
    public static Path shownLog(Path folder) {
        Path console = folder.resolve(CONSOLE_LOG);
        return Files.isRegularFile(console) ? console : folder.resolve(ALL_LOG);
    }

    private final Path dir;

    private RunFolder(Path dir) {
        this.dir = dir;
    }

    public static RunFolder create(Path logsDir, String job, String runId) throws IOException {
        Path dir = logsDir.resolve(job).resolve(runId);
        Files.createDirectories(dir);
        return new RunFolder(dir);
    }

    public Path dir() {
        return dir;
    }

    public void writeJob(JsonNode composed) throws IOException {
        Map<String, Object> tree = JSON.convertValue(composed, new TypeReference<Map<String, Object>>() { });
        DumperOptions options = new DumperOptions();
        options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        options.setIndicatorIndent(2);
        options.setIndentWithIndicator(true);
        String text = "# the job as it ran: after extends, ${env:...} and --set\n" + new Yaml(options).dump(tree);
        Files.writeString(dir.resolve("job.yaml"), text, StandardCharsets.UTF_8);
    }

    /**
     * Writes {@code name} whole or not at all (a temporary file renamed over it): status, runs and
     * stop read a run's files while it writes them, and never see half of one.
     */
    public void writeJson(String name, JsonNode node) throws IOException {
        Path tmp = dir.resolve("." + name + ".tmp");
        Files.writeString(tmp, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(node) + "\n");
        Files.move(tmp, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** The run folder of an existing directory. */
    public static RunFolder of(Path dir) {
        return new RunFolder(dir);
    }

    public void writeCommand(List<String> argv) throws IOException {
        Files.writeString(dir.resolve("command.txt"), String.join(" ", argv) + "\n");
    }
}
