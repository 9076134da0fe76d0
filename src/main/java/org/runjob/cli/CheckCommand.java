package org.runjob.cli;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

import org.runjob.json.Json;
import org.runjob.launch.Spares;
import org.runjob.node.Backend;
import org.runjob.node.Cluster;
import org.runjob.plan.Inventory;
import org.runjob.plan.Planner;
import org.runjob.preflight.Preflight;
import org.runjob.preflight.PreflightReport;
import org.runjob.report.PreflightText;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.Jobs;
import org.runjob.run.Launch;
import org.runjob.run.Quarantined;
import org.runjob.session.NodeStarter;
import org.runjob.spec.JobSpec;
import org.runjob.spec.SpecLoader;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.node.ObjectNode;

/** {@code runjob check FILE}: the preflight of a run, alone; exit 0 or 3. Ships only the agent jar. */
@Command(name = "check", mixinStandardHelpOptions = true,
        description = "Check every node (reach, SSH login and host key, java, workdir, disk, program, rendezvous port) without starting anything.")
final class CheckCommand implements Callable<Integer> {

    private final Io io;

    @Parameters(index = "0", paramLabel = "FILE", description = "The job file.")
    String file;

    @Mixin
    JobOptions options;

    CheckCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() throws Exception {
        SpecLoader.Loaded loaded = Jobs.load(io, file, options.sets);
        if (loaded == null) {
            return ExitCode.INVALID;
        }
        Optional<Jobs.Resolved> resolved = Jobs.resolve(io, loaded.spec());
        if (resolved.isEmpty()) {
            return ExitCode.PREFLIGHT_FAILED;
        }
        Backend backend = resolved.get().backend();
        Optional<JobSpec> avoided = Quarantined.avoid(io, resolved.get().spec(), loaded.spec().nodesUnnamed());
        if (avoided.isEmpty()) {
            return ExitCode.PREFLIGHT_FAILED;
        }
        JobSpec spec = avoided.get();
        PreflightReport report;
        try (Cluster cluster = Launch.open(backend, spec, io);
             Preflight.Outcome checked = Launch.preflight(spec, backend,
                     new NodeStarter(spec, cluster, io.env(), Optional.empty()), Optional.empty(), Optional.empty(), io.err())) {
            report = checked.report();
        }
        List<String> misfits = List.of();
        if (report.ok() && !spec.spares().isEmpty()) {
            Inventory inventory = report.inventory(backend.gpus());
            misfits = Spares.misfits(spec, (changed, masterAddr) -> Planner.plan(changed, inventory, "check", report.masterPort()));
        }
        if (options.output == JobOptions.Output.json) {
            ObjectNode json = PreflightText.json(report);
            if (!misfits.isEmpty()) {
                json.put("ok", false);
                misfits.forEach(json.putArray("spare_problems")::add);
            }
            io.out().println(Json.pretty(json));
        } else {
            PreflightText.print(report, io.out(), Io.colour(io), Io.width(io));
            misfits.forEach(m -> io.out().println("FAIL " + m));
        }
        io.out().flush();
        return report.ok() && misfits.isEmpty() ? ExitCode.OK : ExitCode.PREFLIGHT_FAILED;
    }
}
