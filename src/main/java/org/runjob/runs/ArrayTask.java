package org.runjob.runs;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

import org.runjob.json.Json;

import tools.jackson.databind.JsonNode;

/**
 * The run a task of a submitted sweep's job array runs: the row of the sweep's
 * {@value QueuedSweep#ARRAY_FILE} whose {@code task} is the scheduler's task index (in the variable
 * the table's {@code task_variable} names, the queue's {@code BatchQueue#arrayTaskVariable}); task
 * N runs the sweep's point N.
 */
public record ArrayTask(int task, String runId, String job) {

    /** The variable of tables written before they named one: Slurm's. */
    static final String TASK_VARIABLE = "SLURM_ARRAY_TASK_ID";

    /**
     * This task's run, from {@code table} and the task index in {@code env}.
     *
     * @throws IllegalArgumentException naming why there is none: no task index, or none the table names
     * @throws IOException when the table cannot be read
     */
    public static ArrayTask of(Path table, Map<String, String> env) throws IOException {
        JsonNode root = Json.read(table);
        String variable = root.path("task_variable").asString(TASK_VARIABLE);
        String index = env.getOrDefault(variable, "");
        if (!index.matches("\\d{1,9}")) {
            throw new IllegalArgumentException("--array-task runs inside a job array's task, and " + variable
                    + (index.isEmpty() ? " is not set" : " is " + Json.compact(index)));
        }
        int task = Integer.parseInt(index);
        for (JsonNode row : root.path("runs")) {
            if (row.path("task").asInt(-1) == task) {
                return new ArrayTask(task, row.path("run_id").asString(""), row.path("job").asString(""));
            }
        }
        throw new IllegalArgumentException(table + " names no run for task " + task + " of the array");
    }
}
