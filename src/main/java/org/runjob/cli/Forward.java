package org.runjob.cli;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.runjob.run.Io;
import org.runjob.run.RunIndex;
import org.runjob.runs.Remote;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;
import picocli.CommandLine.ParseResult;

/**
 * A command about a submitted run, given again to the run's master node ({@link Remote#call}):
 * the words the user typed, rebuilt from what picocli parsed, with the run named by its full id
 * and without the options that mean something only here ({@code --logs-dir}: the node keeps its
 * submitted runs in a folder of its own).
 */
final class Forward {

    private static final Set<String> HERE_ONLY = Set.of("--logs-dir");

    private Forward() {
    }

    /** Runs {@code command}, as parsed, on the master node of {@code entry}; its exit code. */
    static int call(Io io, CommandSpec command, RunIndex.Entry entry) throws IOException {
        return Remote.call(io, entry, argv(command, entry.runId(), Set.of()));
    }

    /**
     * {@code command} as the master node is to run it: its name, the first positional (the run) as
     * {@code runId}, the other positionals and every option given as typed, less {@code hereOnly}
     * and {@code --logs-dir}.
     */
    static List<String> argv(CommandSpec command, String runId, Set<String> hereOnly) {
        ParseResult parsed = command.commandLine().getParseResult();
        // named "runjob logs" when parsed alone, "logs" under runjob
        List<String> argv = new ArrayList<>(List.of(command.name().substring(command.name().lastIndexOf(' ') + 1)));
        // a parameter given twice is matched twice; its values are all in one list
        for (PositionalParamSpec p : new LinkedHashSet<>(parsed.matchedPositionals())) {
            if (p.index().min() == 0) {
                argv.add(runId);
            } else {
                argv.addAll(p.originalStringValues());
            }
        }
        for (OptionSpec o : new LinkedHashSet<>(parsed.matchedOptions())) {
            if (HERE_ONLY.contains(o.longestName()) || hereOnly.contains(o.longestName())) {
                continue;
            }
            if (o.arity().max() == 0 || o.originalStringValues().isEmpty()) {
                argv.add(o.longestName());
            } else {
                for (String value : o.originalStringValues()) {
                    argv.add(o.longestName());
                    argv.add(value);
                }
            }
        }
        return argv;
    }
}
