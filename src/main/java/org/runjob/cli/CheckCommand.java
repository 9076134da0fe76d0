package org.runjob.cli;

import java.util.Optional;
import java.util.concurrent.Callable;

import org.runjob.json.Json;
import org.runjob.node.Backend;
import org.runjob.node.Cluster;
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
        if (options.output == JobOptions.Output.json) {
            io.out().println(Json.pretty(PreflightText.json(report)));
        } else {
            PreflightText.print(report, io.out(), Io.colour(io), Io.width(io));
        }
        io.out().flush();
        return report.ok() ? ExitCode.OK : ExitCode.PREFLIGHT_FAILED;
    }
}
