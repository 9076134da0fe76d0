package org.runjob.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import picocli.CommandLine;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The one line for an unknown option after the job file of {@code runjob FILE} or
 * {@code runjob submit FILE}: most often an argument meant for the entrypoint, written without {@code --} before it. The line
 * shows the same command with {@code --} where it belongs (and picocli's guess, for a misspelt
 * option of runjob's own), instead of the whole usage.
 */
final class EntrypointArgsHint {

    private EntrypointArgsHint() {
    }

    /** The line for {@code ex}, or empty when it is not an unknown option of a command that runs a job. */
    static Optional<String> of(CommandLine.ParameterException ex, String[] given) {
        Optional<String> file = jobFile(ex.getCommandLine());
        if (!(ex instanceof UnmatchedArgumentException u) || file.isEmpty()) {
            return Optional.empty();
        }
        Optional<String> unknown = u.getUnmatched().stream().filter(a -> a.startsWith("-") && !a.equals("--")).findFirst();
        if (unknown.isEmpty()) {
            return Optional.empty();
        }
        List<String> args = List.of(given);
        int at = args.indexOf(unknown.get());
        int dashes = args.indexOf("--");
        int fileAt = args.indexOf(file.get());
        if (at < 0 || fileAt < 0 || fileAt > at || (dashes >= 0 && dashes < at)) {
            // an unknown option before the job file is runjob's own, misspelt: picocli's usage says more
            return Optional.empty();
        }
        List<String> fixed = new ArrayList<>(args.subList(0, at));
        fixed.add("--");
        for (String a : args.subList(at, args.size())) {
            if (!a.equals("--")) {
                fixed.add(a);
            }
        }
        List<String> guesses = u.getSuggestions();
        return Optional.of("unknown option " + unknown.get() + (guesses.isEmpty() ? "" : " (did you mean " + guesses.get(0) + "?)")
                + "; arguments for the entrypoint go after --: runjob " + String.join(" ", fixed.stream().map(EntrypointArgsHint::quoted).toList()));
    }

    /** The job file given to a command that runs a job; empty for other commands, or when none was given. */
    private static Optional<String> jobFile(CommandLine cmd) {
        if (cmd.getCommand() instanceof RunjobCommand r) {
            return Optional.ofNullable(r.file);
        }
        if (cmd.getCommand() instanceof SubmitCommand s) {
            return Optional.ofNullable(s.file);
        }
        return Optional.empty();
    }

    /** {@code a} as a shell reads it back: single-quoted when it holds anything but plain characters. */
    private static String quoted(String a) {
        return a.matches("[A-Za-z0-9_@%+=:,./-]+") ? a : "'" + a.replace("'", "'\\''") + "'";
    }
}
