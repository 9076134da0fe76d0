package org.runjob.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

import org.runjob.backends.Backends;
import org.runjob.json.Json;
import org.runjob.plan.LaunchPlan;
import org.runjob.plan.PlanningException;
import org.runjob.report.PlanJson;
import org.runjob.report.PlanText;
import org.runjob.run.ExitCode;
import org.runjob.run.Io;
import org.runjob.run.Jobs;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/** {@code runjob plan FILE}: the same plan as {@code runjob --dry-run FILE}. */
@Command(name = "plan", mixinStandardHelpOptions = true,
        description = "Validate FILE and print which process runs on which machine with which environment; contacts no machine.")
final class PlanCommand implements Callable<Integer> {

    private final Io io;

    @Parameters(index = "0", paramLabel = "FILE", description = "The job file.")
    String file;

    @Mixin
    JobOptions options;

    PlanCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() {
        return printPlan(io, file, options, List.of());
    }

    static int printPlan(Io io, String file, JobOptions options, List<String> args) {
        LaunchPlan plan;
        try {
            plan = Jobs.dryRunPlan(io, file, options.sets, options.point(), args);
        } catch (PlanningException e) {
            // a valid job whose ranks depend on what launch finds (gpus: all without workers): say so, not an error
            if (options.output == JobOptions.Output.json) {
                io.out().println(Json.pretty(Json.object().put("job_file", file).put("planned", false).put("reason", e.getMessage())));
            } else {
                io.out().println("dry run of " + file + ": " + e.getMessage()
                        + "; `runjob gpus " + file + "` shows the GPUs each node has.");
                io.out().println("dry run: no machine was contacted and nothing was started.");
            }
            io.out().flush();
            return ExitCode.OK;
        }
        if (plan == null) {
            return ExitCode.INVALID;
        }
        if (options.output == JobOptions.Output.json) {
            io.out().println(Json.pretty(PlanJson.of(plan, Backends.of(plan.spec()))));
            io.out().flush();
        } else {
            PlanText.print(plan, Backends.of(plan.spec()), Path.of(""), io.out());
        }
        return ExitCode.OK;
    }
}
