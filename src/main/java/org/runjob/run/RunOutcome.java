package org.runjob.run;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.runjob.distribute.Shipped;
import org.runjob.json.Json;
import org.runjob.launch.RunResult;
import org.runjob.logs.GitInfo;
import org.runjob.logs.OutputRouter;
import org.runjob.node.RunHandle;
import org.runjob.plan.LaunchPlan;
import org.runjob.preflight.PreflightReport;
import org.runjob.report.EnvironmentJson;
import org.runjob.report.GpuTable;
import org.runjob.report.Metric;
import org.runjob.report.SummaryJson;

import tools.jackson.databind.node.ObjectNode;

/**
 * Everything a launched run's {@code summary.json} says, gathered in one value; {@link #summary}
 * builds the file from it.
 *
 * @param result      every attempt's ranks and verdicts
 * @param state       how the run ended, and so its exit code
 * @param commandLine the command as recorded
 * @param git         the job file's git commit, when it is in a work tree
 * @param plan        the plan that ran
 * @param report      what preflight found (GPUs per node)
 * @param shipped     what was sent to each node
 * @param handle      the backend's handle on the run (a Slurm job id), if it has one
 * @param sweepPoint  this run's values of the job's sweep; empty for a job without one
 * @param folder      the run folder (rank 0's log, for the job's metric)
 */
record RunOutcome(RunResult result, RunState state, List<String> commandLine, Optional<GitInfo> git, LaunchPlan plan,
                  PreflightReport report, Map<String, Shipped> shipped, Optional<RunHandle> handle, Map<String, String> sweepPoint,
                  Path folder) {

    int exitCode() {
        return state.exitCode();
    }

    ObjectNode summary() {
        ObjectNode summary = SummaryJson.of(result, exitCode(), commandLine,
                git.map(g -> Json.object().put("commit", g.commit()).put("dirty", g.dirty())).orElse(null));
        ObjectNode distribution = summary.putObject("distribution");
        for (var node : plan.nodes()) {
            Shipped s = shipped.get(node.name());
            if (s != null) {
                ObjectNode d = distribution.putObject(node.name()).put("bytes_sent", s.bytesSent()).put("bytes_unchanged", s.bytesUnchanged())
                        .put("files_sent", s.filesSent()).put("files_unchanged", s.filesUnchanged());
                s.relayedBy().ifPresent(from -> d.put("relayed_by", from));
            }
        }
        if (!report.gpus().isEmpty()) {
            summary.set("gpus", GpuTable.used(plan, report.gpus()));
        }
        if (!report.environments().isEmpty()) {
            summary.set("environment", EnvironmentJson.fingerprint(report));
        }
        handle.ifPresent(h -> {
            ObjectNode fields = summary.putObject(h.backend());
            h.fields().forEach(fields::put);
        });
        var metric = plan.spec().metric();
        if (metric.isPresent() && !result.attempts().isEmpty()) {
            int last = result.attempts().get(result.attempts().size() - 1).attempt();
            summary.put("metric", Metric.last(metric.get(), folder.resolve(OutputRouter.rankFileName(0, last))).orElse(null));
        }
        if (!sweepPoint.isEmpty()) {
            ObjectNode sweep = summary.putObject("sweep");
            sweepPoint.forEach(sweep::put);
        }
        return summary;
    }
}
