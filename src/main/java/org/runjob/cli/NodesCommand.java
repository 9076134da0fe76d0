package org.runjob.cli;

import java.io.IOException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

import org.runjob.json.Json;
import org.runjob.report.Table;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.QuarantineFile;
import org.runjob.runs.MasterQuarantines;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import tools.jackson.databind.node.ArrayNode;

/**
 * {@code runjob nodes}: this user's quarantined nodes (node, machine, until, reason, run), this
 * machine's and those kept on the master nodes of the user's submitted runs
 * ({@link MasterQuarantines}); {@code --clear NAME} ends one (by node name or machine) in both,
 * {@code --clear-all} every one. Exit 0; 2 when {@code --clear} names no quarantined node; 3 when
 * this machine's quarantine cannot be read or changed.
 */
@Command(name = "nodes", mixinStandardHelpOptions = true,
        description = "List the nodes your runs quarantined (lost, or failed a health check) and until when; --clear NAME makes one usable again.")
final class NodesCommand implements Callable<Integer> {

    private final Io io;

    @Option(names = "--clear", paramLabel = "NAME", description = "End the quarantine of the node with this name (or machine, HOST:PORT).")
    String clear;

    @Option(names = "--clear-all", description = "End every quarantine.")
    boolean clearAll;

    @Option(names = "--this-machine", hidden = true, description = "Only this machine's quarantine (what a launching machine asks a master node).")
    boolean thisMachine;

    @Option(names = "--logs-dir", hidden = true, paramLabel = "DIR", description = "Not used: given by a launching machine's call.")
    String logsDir;

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
        Map<String, List<QuarantineFile.Entry>> elsewhere = new LinkedHashMap<>();
        if (!thisMachine) {
            for (MasterQuarantines.Answer a : MasterQuarantines.ask(io)) {
                if (a.problem() != null) {
                    io.err().println("runjob: note: cannot ask master node " + a.master() + " for its quarantine: " + a.problem());
                    continue;
                }
                // a master node that shares this machine's state (one home over NFS) answers with the same entries
                List<QuarantineFile.Entry> own = a.entries().stream().filter(e -> !active.contains(e)
                        && elsewhere.values().stream().noneMatch(l -> l.contains(e))).toList();
                if (!own.isEmpty()) {
                    elsewhere.put(a.master(), own);
                }
            }
        }
        if (output == JobOptions.Output.json) {
            ArrayNode a = Json.array();
            active.forEach(e -> a.add(e.json().put("kept_on", "here")));
            elsewhere.forEach((master, entries) -> entries.forEach(e -> a.add(e.json().put("kept_on", master))));
            io.out().println(Json.pretty(a));
        } else if (active.isEmpty() && elsewhere.isEmpty()) {
            io.out().println("no node is quarantined");
        } else {
            if (!active.isEmpty()) {
                table(active);
            }
            elsewhere.forEach((master, entries) -> {
                io.out().println("kept on master node " + master + " (by your submitted runs' coordinator there):");
                table(entries);
            });
            io.out().println("runjob nodes --clear NODE makes one usable again");
        }
        io.out().flush();
        return ExitCode.OK;
    }

    private void table(List<QuarantineFile.Entry> entries) {
        Table t = Table.of("%-16s  %-24s  %-20s  %-20s  %s", "node", "machine", "until", "run", "reason");
        for (QuarantineFile.Entry e : entries) {
            t.row(e.node(), e.machine(), e.until().toString(), e.runId(), e.reason());
        }
        t.print(io.out());
    }

    private int clear() {
        List<QuarantineFile.Entry> removed;
        try {
            removed = QuarantineFile.clear(io.env(), clearAll ? null : clear);
        } catch (IOException e) {
            io.err().println("runjob: cannot change the quarantine in " + QuarantineFile.dir(io.env()) + ": " + e.getMessage());
            return ExitCode.PREFLIGHT_FAILED;
        }
        for (QuarantineFile.Entry e : removed) {
            io.out().println("cleared node " + e.node() + " (" + e.machine() + ")");
        }
        boolean any = !removed.isEmpty();
        if (!thisMachine) {
            for (MasterQuarantines.Cleared c : MasterQuarantines.clear(io, clearAll ? null : clear)) {
                if (c.problem() != null) {
                    io.err().println("runjob: note: cannot clear on master node " + c.master() + ": " + c.problem());
                }
                for (String line : c.lines()) {
                    if (!removed.stream().anyMatch(e -> line.equals("cleared node " + e.node() + " (" + e.machine() + ")"))) {
                        io.out().println(line + " on master node " + c.master());
                    }
                    any = true;
                }
            }
        }
        if (!any && !clearAll) {
            io.err().println("runjob: no quarantined node is named " + clear + " (runjob nodes lists them)");
            return ExitCode.INVALID;
        }
        io.out().flush();
        return ExitCode.OK;
    }
}
