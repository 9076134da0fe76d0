package org.runjob.agent;

import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A node's podman or docker containers, found and removed by label: what the worker runtime leaves is cleaned up. */
final class Containers {

    static final long COMMAND_MS = 30_000;

    private Containers() {
    }

    /** Removes every container, running or exited, that carries {@code label} ({@code KEY=VALUE}); quiet when there is none. */
    static void remove(String runtime, String label) {
        List<String> ids = ids(runtime, label);
        if (!ids.isEmpty()) {
            List<String> argv = new ArrayList<>(List.of(runtime, "rm", "-f"));
            argv.addAll(ids);
            Commands.run(new ProcessBuilder(argv).redirectErrorStream(true), COMMAND_MS, 65536);
        }
    }

    /** A container whose program ended: its exit code and when it ended, in epoch milliseconds. */
    record Ended(int code, long atMillis) {
    }

    /** How the one container that carries {@code label} ended, by its runtime's record; empty when it has not ended or is not one. */
    static Optional<Ended> ended(String runtime, String label) {
        List<String> ids = ids(runtime, label);
        if (ids.size() != 1) {
            return Optional.empty();
        }
        return Commands.run(new ProcessBuilder(runtime, "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}} {{.State.FinishedAt}}", ids.get(0))
                        .redirectError(ProcessBuilder.Redirect.DISCARD), COMMAND_MS, 4096)
                .filter(r -> r.code() == 0).flatMap(r -> parseEnded(r.out().strip()));
    }

    private static final Pattern STATE = Pattern.compile(
            "(exited|stopped) (-?\\d+) (\\d{4}-\\d\\d-\\d\\d)[ T](\\d\\d:\\d\\d:\\d\\d)(\\.\\d{1,9})? ?(Z|[+-]\\d\\d:?\\d\\d)?.*");

    /**
     * Reads {@code STATUS CODE FINISHED} as podman ({@code 2026-12-07 07:03:02.325523801 +0000 UTC})
     * and docker ({@code 2026-12-07T07:03:02.325523801Z}) print it; empty unless the status is an end.
     */
    static Optional<Ended> parseEnded(String line) {
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

    /** The ids of the containers that carry {@code label}, running or not. */
    static List<String> ids(String runtime, String label) {
        Optional<Commands.Ran> ran = Commands.run(new ProcessBuilder(runtime, "ps", "-aq", "--filter", "label=" + label)
                .redirectError(ProcessBuilder.Redirect.DISCARD), COMMAND_MS, 65536);
        return ran.filter(r -> r.code() == 0).map(r -> r.out().lines().map(String::strip).filter(l -> l.matches("[0-9a-f]{6,64}")).toList())
                .orElse(List.of());
    }
}
