package org.runjob.cli;

import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

import org.runjob.json.Json;
import org.runjob.report.Table;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.QuarantineFile;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import tools.jackson.databind.node.ArrayNode;

/**
 * {@code runjob nodes}: this user's quarantined nodes (node, machine, until, reason, run);
 * {@code --clear NAME} ends one (by node name or machine), {@code --clear-all} every one. Exit 0;
 * 2 when {@code --clear} names no quarantined node; 3 when the quarantine cannot be read or changed.
 */
@Command(name = "nodes", mixinStandardHelpOptions = true,
        description = "List the nodes your runs quarantined (lost, or failed a health check) and until when; --clear NAME makes one usable again.")
final class NodesCommand implements Callable<Integer> {

    private final Io io;

    @Option(names = "--clear", paramLabel = "NAME", description = "End the quarantine of the node with this name (or machine, HOST:PORT).")
    String clear;

    @Option(names = "--clear-all", description = "End every quarantine.")
    boolean clearAll;

    @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "text", description = "text or json (default: ${DEFAULT-VALUE}).")
    JobOptions.Output output = JobOptions.Output.text;

    NodesCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() {
        Optional<String> problem = QuarantineFile.problem(io.env());
        if (problem.isPresent()) {
            io.err().println("runjob: the quarantine in " + QuarantineFile.dir(io.env()) + " is not used: " + problem.get());
            return ExitCode.PREFLIGHT_FAILED;
        }
        if (clear != null || clearAll) {
            return clear();
        }
        Instant now = io.clock().instant();
        List<QuarantineFile.Entry> active = QuarantineFile.active(io.env(), now);
        if (output == JobOptions.Output.json) {
            ArrayNode a = Json.array();
            for (QuarantineFile.Entry e : active) {
                a.add(e.json());
            }
            io.out().println(Json.pretty(a));
        } else if (active.isEmpty()) {
            io.out().println("no node is quarantined");
        } else {
            Table t = Table.of("%-16s  %-24s  %-20s  %-20s  %s", "node", "machine", "until", "run", "reason");
            for (QuarantineFile.Entry e : active) {
                t.row(e.node(), e.machine(), e.until().toString(), e.runId(), e.reason());
            }
            t.print(io.out());
            io.out().println("runjob nodes --clear NODE makes one usable again");
        }
        io.out().flush();
        return ExitCode.OK;
    }

    private int clear() {
        List<QuarantineFile.Entry> removed;
        try {
            removed = QuarantineFile.clear(io.env(), clearAll ? null : clear);
        } catch (IOException e) {
            io.err().println("runjob: cannot change the quarantine in " + QuarantineFile.dir(io.env()) + ": " + e.getMessage());
            return ExitCode.PREFLIGHT_FAILED;
        }
        if (removed.isEmpty() && !clearAll) {
            io.err().println("runjob: no quarantined node is named " + clear + " (runjob nodes lists them)");
            return ExitCode.INVALID;
        }
        for (QuarantineFile.Entry e : removed) {
            io.out().println("cleared node " + e.node() + " (" + e.machine() + ")");
        }
        io.out().flush();
        return ExitCode.OK;
    }
}
