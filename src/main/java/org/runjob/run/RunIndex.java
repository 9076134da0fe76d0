package org.runjob.run;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.runjob.json.Json;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * This user's runs, wherever they were started from: one small file per run in
 * {@code ${XDG_STATE_HOME:-~/.local/state}/runjob/runs/RUN.json} (directory mode 700). A run that
 * lives here names its run folder; a submitted run names its master node, its folder there and
 * what reaches that node again over SSH (the node and the job's ssh settings: no env, no files).
 * {@code runs}, {@code status}, {@code logs} and {@code stop} read it from any directory.
 */
public final class RunIndex {

    private static final JsonMapper JSON = Json.MAPPER;

    /**
     * One run: {@code node} and {@code reach} only for a submitted run; {@code end} for a submitted
     * run whose end a command here has learned from its master node ({@code state},
     * {@code exit_code}, {@code started}, {@code ended}).
     */
    public record Entry(String runId, String job, String started, Optional<String> node, String folder, Optional<JsonNode> reach,
                        Optional<JsonNode> end) {

        public Entry(String runId, String job, String started, Optional<String> node, String folder, Optional<JsonNode> reach) {
            this(runId, job, started, node, folder, reach, Optional.empty());
        }

        public static Entry here(String runId, String job, Instant started, Path folder) {
            return new Entry(runId, job, started.toString(), Optional.empty(), folder.toAbsolutePath().normalize().toString(), Optional.empty());
        }

        public static Entry submitted(String runId, String job, Instant started, String node, String folder, ObjectNode reach) {
            return new Entry(runId, job, started.toString(), Optional.of(node), folder, Optional.of(reach));
        }

        public boolean isSubmitted() {
            return node.isPresent();
        }

        /** This entry with its run's end recorded. */
        public Entry ended(JsonNode how) {
            return new Entry(runId, job, started, node, folder, reach, Optional.of(how));
        }
    }

    private RunIndex() {
    }

    public static Path dir(Map<String, String> env) {
        String state = env.get("XDG_STATE_HOME");
        Path base = state != null && state.startsWith("/") ? Path.of(state) : Path.of(env.getOrDefault("HOME", System.getProperty("user.home")), ".local", "state");
        return base.resolve("runjob").resolve("runs");
    }

    /** Why the index's directory is not used (another user's, or open to others); empty when it is, or is not there yet. */
    public static Optional<String> problem(Map<String, String> env) {
        return Owned.privateDir(dir(env));
    }

    /** Records a run; a failure to record is said on stderr, never fatal. */
    public static void add(Io io, Entry e) {
        Path dir = dir(io.env());
        try {
            ObjectNode o = JSON.createObjectNode().put("run_id", e.runId()).put("job", e.job()).put("started", e.started())
                    .put("folder", e.folder());
            e.node().ifPresent(n -> o.put("node", n));
            e.reach().ifPresent(r -> o.set("reach", r));
            e.end().ifPresent(r -> o.set("end", r));
            PrivateRecords.replace(dir, e.runId() + ".json", o);
        } catch (IOException | RuntimeException ex) {
            io.err().println("runjob: note: cannot add run " + e.runId() + " to the run index " + dir + ": " + ex.getMessage());
        }
    }

    /** Every recorded run, oldest first (run ids begin with their start time); runs here whose folder is gone are left out. */
    public static List<Entry> list(Map<String, String> env) {
        List<Entry> out = new ArrayList<>();
        for (JsonNode o : PrivateRecords.read(dir(env))) {
            Entry e = new Entry(o.path("run_id").asString(""), o.path("job").asString(""), o.path("started").asString(""),
                    Optional.ofNullable(o.path("node").asString(null)), o.path("folder").asString(""),
                    o.has("reach") ? Optional.of(o.get("reach")) : Optional.empty(),
                    o.has("end") ? Optional.of(o.get("end")) : Optional.empty());
            try {
                if (e.isSubmitted() || Files.isDirectory(Path.of(e.folder()))) {
                    out.add(e);
                }
            } catch (RuntimeException ex) {
                // a folder that is no path: not listed
            }
        }
        out.sort(Comparator.comparing(Entry::runId));
        return out;
    }
}
