package org.runjob.runtime;

import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A runtime's record of its containers, spoken as the docker command line speaks it (podman and
 * docker alike): {@code ps -aq --filter label=L}, {@code rm -f ID...} and {@code inspect}. The
 * agent's watchdog, a shell script that outlives the agent, runs the same two commands.
 */
public final class ContainerStore {

    private final String program;

    public ContainerStore(String program) {
        this.program = program;
    }

    /** The runtime's program, as its commands here name it (the first word of each). */
    public String program() {
        return program;
    }

    /** The ids, one per line, of the containers that carry {@code label} ({@code KEY=VALUE}), running or not. */
    public List<String> listArgv(String label) {
        return List.of(program, "ps", "-aq", "--filter", "label=" + label);
    }

    /** Removes the containers {@code ids}, running or exited. */
    public List<String> removeArgv(List<String> ids) {
        List<String> out = new ArrayList<>(List.of(program, "rm", "-f"));
        out.addAll(ids);
        return out;
    }

    /** Prints {@code STATUS CODE FINISHED} of the container {@code id}, which {@link #parseEnded} reads. */
    public List<String> endedArgv(String id) {
        return List.of(program, "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}} {{.State.FinishedAt}}", id);
    }

    /** The container ids in the output of {@link #listArgv}. */
    public static List<String> ids(String out) {
        return out.lines().map(String::strip).filter(l -> l.matches("[0-9a-f]{6,64}")).toList();
    }

    /** A container whose program ended: its exit code and when it ended, in epoch milliseconds. */
    public record Ended(int code, long atMillis) {
    }

    private static final Pattern STATE = Pattern.compile(
            "(exited|stopped) (-?\\d+) (\\d{4}-\\d\\d-\\d\\d)[ T](\\d\\d:\\d\\d:\\d\\d)(\\.\\d{1,9})? ?(Z|[+-]\\d\\d:?\\d\\d)?.*");

    /**
     * Reads {@code STATUS CODE FINISHED} as podman ({@code 2026-12-07 07:03:02.325523801 +0000 UTC})
     * and docker ({@code 2026-12-07T07:03:02.325523801Z}) print it; empty unless the status is an end.
     */
    public static Optional<Ended> parseEnded(String line) {
        Matcher m = STATE.matcher(line);
        if (!m.matches()) {
            return Optional.empty();
        }
        String fraction = m.group(5) == null ? "" : m.group(5);
        LocalDateTime at = LocalDateTime.parse(m.group(3) + "T" + m.group(4) + fraction);
        String zone = m.group(6) == null || m.group(6).equals("Z") ? "+00:00"
                : m.group(6).contains(":") ? m.group(6) : m.group(6).substring(0, 3) + ":" + m.group(6).substring(3);
        long millis = OffsetDateTime.of(at, ZoneOffset.of(zone)).toInstant().toEpochMilli();
        return Optional.of(new Ended(Integer.parseInt(m.group(2)), millis));
    }
}
