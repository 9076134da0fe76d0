package org.runjob.cli;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;

import org.runjob.launch.Launcher;
import org.runjob.launch.RunResult;
import org.runjob.logs.Console;
import org.runjob.logs.Diagnostics;
import org.runjob.logs.GitInfo;
import org.runjob.logs.OutputRouter;
import org.runjob.logs.RunFolder;
import org.runjob.plan.Inventory;
import org.runjob.plan.LaunchPlan;
import org.runjob.plan.Planner;
import org.runjob.plan.PlanningException;
import org.runjob.plan.RunId;
import org.runjob.report.PlanJson;
import org.runjob.report.RunReport;
import org.runjob.report.SummaryJson;
import org.runjob.spec.InvalidSpecException;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeSpec;
import org.runjob.spec.SpecLoader;

import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/** {@code runjob FILE}: load, plan, launch, record, report; returns the exit code. */
final class RunJob {

    private RunJob() {
    }

    static int run(Io io, String file, JobOptions options, Set<Integer> ranks, List<String> commandLine) throws IOException {
        SpecLoader.Loaded loaded;
        try {
            loaded = new SpecLoader(io.env()).load(Path.of(file), file, options.sets);
        } catch (InvalidSpecException e) {
            Jobs.printProblems(io, file, e.problems());
            return ExitCode.INVALID;
        }
        JobSpec spec = loaded.spec();
        List<String> remote = spec.nodes().stream().filter(n -> !n.local()).map(NodeSpec::name).toList();
        if (!remote.isEmpty()) {
            io.err().println("runjob: " + file + ": node" + (remote.size() == 1 ? " " : "s ") + String.join(", ", remote)
                    + " would need SSH, which this version cannot launch yet; mark nodes local: true to run them here,"
                    + " or see the plan with --dry-run");
            return ExitCode.INVALID;
        }
        String runId = RunId.of(io.clock().instant(), io.random().getAsInt());
        LaunchPlan plan;
        try {
            plan = Planner.plan(spec, Inventory.unprobed(), runId, masterPort(spec));
        } catch (PlanningException e) {
            io.err().println("runjob: " + file + ": " + e.getMessage());
            return ExitCode.INVALID;
        }
        RunFolder folder = RunFolder.create(Path.of(spec.logsDir()), spec.name(), runId);
        Diagnostics.toRunFolder(folder.dir().resolve("runjob.log"), options.verbose);
        try {
            folder.writeJob(loaded.document().json());
            folder.writeJson("plan.json", PlanJson.of(plan));
            folder.writeCommand(commandLine);
            io.err().printf("runjob: %s run %s: %d worker%s on %d node%s, rendezvous %s:%d; logs in %s%n", spec.name(), runId,
                    plan.worldSize(), plan.worldSize() == 1 ? "" : "s", plan.nodes().size(), plan.nodes().size() == 1 ? "" : "s",
                    plan.masterAddr(), plan.masterPort().orElse(0), folder.dir());
            boolean colour = io.terminal() && !io.env().containsKey("NO_COLOR") && !"dumb".equals(io.env().get("TERM"));
            RunResult result;
            try (OutputRouter router = new OutputRouter(folder.dir(), new Console(io.out(), colour, ranks))) {
                Launcher launcher = new Launcher(io.interrupts(), io.clock(), io.env());
                result = new RunResult(spec.name(), runId, folder.dir(), launcher.run(plan, router));
            }
            int code = result.succeeded() ? ExitCode.OK : result.interrupted() ? ExitCode.INTERRUPTED : ExitCode.WORKER_FAILED;
            ObjectNode git = GitInfo.of(Path.of(file)).map(g -> JsonNodeFactory.instance.objectNode()
                    .put("commit", g.commit()).put("dirty", g.dirty())).orElse(null);
            folder.writeJson("summary.json", SummaryJson.of(result, code, commandLine, git));
            RunReport.print(result, io.err());
            return code;
        } finally {
            Diagnostics.reset();
        }
    }

    /** For {@code port: auto} on a local master: a port that is free now. */
    private static OptionalInt masterPort(JobSpec spec) throws IOException {
        if (!(spec.rendezvous().port() instanceof JobSpec.MasterPort.Auto)) {
            return OptionalInt.empty();
        }
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(0));
            return OptionalInt.of(s.getLocalPort());
        }
    }

    static List<String> command(List<String> args) {
        List<String> out = new ArrayList<>();
        out.add("runjob");
        out.addAll(args);
        return out;
    }
}
