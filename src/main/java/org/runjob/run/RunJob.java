package org.runjob.run;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

import org.runjob.backends.Backends;
import org.runjob.distribute.Shipped;
import org.runjob.json.Json;
import org.runjob.launch.AttemptResult;
import org.runjob.launch.Health;
import org.runjob.launch.Launcher;
import org.runjob.launch.Quarantine;
import org.runjob.launch.Recovery;
import org.runjob.launch.RunResult;
import org.runjob.launch.Shrink;
import org.runjob.launch.Spares;
import org.runjob.logs.Console;
import org.runjob.logs.Diagnostics;
import org.runjob.logs.GitInfo;
import org.runjob.logs.MetricsLog;
import org.runjob.logs.MetricsSummary;
import org.runjob.logs.OutputRouter;
import org.runjob.logs.RunFolder;
import org.runjob.logs.StragglerWatch;
import org.runjob.node.Backend;
import org.runjob.node.Cluster;
import org.runjob.node.RunHandle;
import org.runjob.plan.Inventory;
import org.runjob.plan.LaunchPlan;
import org.runjob.plan.NodePlan;
import org.runjob.plan.Planner;
import org.runjob.plan.PlanningException;
import org.runjob.preflight.GpuPick;
import org.runjob.preflight.Preflight;
import org.runjob.preflight.PreflightReport;
import org.runjob.protocol.EnvironmentRequest;
import org.runjob.protocol.Lease;
import org.runjob.report.EnvironmentJson;
import org.runjob.report.PlanJson;
import org.runjob.report.PreflightText;
import org.runjob.report.RunReport;
import org.runjob.session.Interrupts;
import org.runjob.session.NodeSession;
import org.runjob.session.NodeStarter;
import org.runjob.spec.EntrypointSpec;
import org.runjob.spec.GpuAuthority;
import org.runjob.spec.JobSpec;
import org.runjob.spec.SpecLoader;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code runjob FILE}: load, preflight (which starts every node's agent and ships the job's files
 * through it), plan with what preflight found, launch on those agents, record, report; returns the
 * exit code.
 */
public final class RunJob {

    /** firstAttempt for a queued run's coordinator: go on from the attempts its folder holds. */
    public static final int CONTINUE = -1;

    private RunJob() {
    }

    /** Runs {@code request}: returns the exit code, having printed what went wrong. */
    public static int run(Io io, RunRequest request) throws IOException {
        String file = request.file();
        Optional<String> givenRunId = request.givenRunId();
        int firstAttempt = request.firstAttempt();
        SpecLoader.Loaded loaded = Jobs.load(io, file, request.sets(), request.args(), request.point());
        if (loaded == null) {
            return ExitCode.INVALID;
        }
        JobSpec asWritten = loaded.spec();
        Path jobLogs = Path.of(asWritten.logsDir()).resolve(asWritten.name());
        String runId;
        try {
            runId = givenRunId.isPresent() ? RunIds.reuse(jobLogs, givenRunId.get()) : RunIds.claim(io, jobLogs);
        } catch (RunIds.NotCreated e) {
            io.err().println("runjob: cannot create the run folder " + e.folder + " (logs.dir " + asWritten.logsDir() + "): " + why(e.reason));
            return ExitCode.INVALID;
        }
        Path logFile = jobLogs.resolve(runId).resolve(RunFolder.RUNJOB_LOG);
        // a queued run's coordinator is its batch step, which Slurm's own warning signal reaches before the time limit
        boolean warnedByScheduler = firstAttempt == CONTINUE;
        if (firstAttempt == CONTINUE) {
            firstAttempt = Requeued.firstAttempt(io, logFile.getParent(), runId, Backends.of(asWritten).queue());
        }
        Diagnostics.toRunFolder(logFile, request.verbose());
        RunStatus status = new RunStatus(RunFolder.of(logFile.getParent()), runId, asWritten.name(), io.clock());
        status.startsAt(firstAttempt);
        status.write(RunState.PREFLIGHT);
        Optional<Jobs.Resolved> resolved = Jobs.resolve(io, asWritten);
        if (resolved.isEmpty()) {
            status.write(RunState.PREFLIGHT_FAILED);
            return ExitCode.PREFLIGHT_FAILED;
        }
        Backend backend = resolved.get().backend();
        // nodes given as a count were placed by the scheduler: a quarantined one is noted, not refused
        Optional<JobSpec> avoided = Quarantined.avoid(io, resolved.get().spec(), asWritten.nodesUnnamed());
        if (avoided.isEmpty()) {
            status.write(RunState.PREFLIGHT_FAILED);
            return ExitCode.PREFLIGHT_FAILED;
        }
        JobSpec spec = avoided.get();
        backend.notes(spec).forEach(n -> io.err().println("runjob: note: " + n));
        OptionalInt ahead = Planner.worldSizeAhead(spec);
        Optional<String> outsideAhead = ahead.isPresent() ? request.ranks().outside(ahead.getAsInt()) : Optional.empty();
        if (outsideAhead.isPresent()) {
            // known from the job alone: refused before any node is reached
            io.err().println("runjob: " + outsideAhead.get());
            refused(logFile.getParent(), givenRunId);
            return ExitCode.INVALID;
        }
        try (SetupLog setupLog = new SetupLog(logFile.getParent(), io.err());
             Cluster cluster = request.hosted().isPresent() ? Backends.hosted(request.hosted().get()) : open(backend, spec, io, warnedByScheduler);
             Preflight.Outcome checked = WorkdirRace.preflight(io, () -> Launch.preflight(spec, backend,
                     new NodeStarter(spec, cluster, io.env(), Optional.of(runId)), Optional.of(runId), request.waitForGpus(), io.err(),
                     request.forceSetup() ? EnvironmentRequest.Setup.FORCE : EnvironmentRequest.Setup.WHEN_DUE, setupLog,
                     () -> io.interrupts().count() > 0))) {
            PreflightReport report = checked.report();
            if (!report.ok() || spec.nodes().stream().anyMatch(n -> !n.local())) {
                PreflightText.print(report, io.err(), Io.colour(io), Io.width(io));
            } else {
                PreflightText.printWarnings(report, io.err());
            }
            if (!report.ok() && io.interrupts().count() > 0) {
                io.err().println("runjob: interrupted during preflight: nothing was started");
                status.write(RunState.INTERRUPTED);
                return ExitCode.INTERRUPTED;
            }
            if (!report.ok()) {
                status.write(RunState.PREFLIGHT_FAILED);
                return ExitCode.PREFLIGHT_FAILED;
            }
            // the spares run nothing until one stands in for a lost node: their agents end (and give their GPUs back) now
            spec.spares().forEach(spare -> Optional.ofNullable(checked.sessions().remove(spare.name())).ifPresent(NodeSession::close));
            Inventory inventory = report.inventory(backend.gpus());
            LaunchPlan plan;
            try {
                plan = Planner.withVariables(Planner.plan(spec, inventory, runId, report.masterPort()), backend.workerVariables());
            } catch (PlanningException e) {
                io.err().println("runjob: " + file + ": " + e.getMessage());
                refused(logFile.getParent(), givenRunId);
                return ExitCode.INVALID;
            }
            Optional<String> outside = request.ranks().outside(plan.worldSize());
            if (outside.isPresent()) {
                io.err().println("runjob: " + outside.get());
                refused(logFile.getParent(), givenRunId);
                return ExitCode.INVALID;
            }
            NodeStarter restarts = new NodeStarter(spec, cluster, io.env(), Optional.of(runId));
            boolean leased = backend.gpus() == GpuAuthority.PROBED_AND_LEASED;
            Spares.Replanner replanner = (changed, masterAddr) -> Planner.withVariables(Planner.plan(changed,
                    inventory.withMasterAddr(masterAddr), runId, plan.masterPort()), backend.workerVariables());
            Spares.misfits(spec, replanner).forEach(m -> io.err().println("runjob: warning: " + m));
            Health health = new Health(spec, runId, false);
            Quarantine quarantine = new QuarantineFile(io.env(), io.clock(), runId, spec.name(), spec.failure().quarantineSeconds(),
                    why -> io.err().println("runjob: " + why));
            if (warnedByScheduler) {
                io.interrupts().explainedBy(SchedulerStops.explainer(io, cluster, spec, asWritten.nodesUnnamed(), quarantine,
                        logFile.getParent()));
            }
            Spares spares = new Spares(spec.spares(), restarts, replanner,
                    node -> leased ? leaseRequest(node, report, plan) : Optional.empty(), health, quarantine);
            Launcher launcher = new Launcher(io.interrupts(), io.clock(), checked.sessions(), restarts, status).startingAt(firstAttempt)
                    .withLeases(leased ? leaseRequests(plan, report) : Map.of()).withSpares(spares)
                    .withShrink(new Shrink(restarts, replanner)).withHealth(health, quarantine);
            int code = launch(io, request, loaded, plan, backend, report, launcher, checked.shipped(), status, cluster.handle(), restarts);
            if (warnedByScheduler && io.interrupts().reason().filter(Interrupts.TIME_LIMIT::equals).isPresent()) {
                cluster.requeueAfterTimeLimit().ifPresent(what -> io.err().println("runjob: " + what));
            } else if (warnedByScheduler && code == ExitCode.INTERRUPTED && io.interrupts().explained().isEmpty()) {
                // a stop: the scheduler's own reasons (a cancel, a preemption, a requeue) come explained, and are left to it
                cluster.cancelAfterStop().ifPresent(what -> io.err().println("runjob: " + what));
            }
            cluster.ended(code);
            return code;
        } finally {
            Diagnostics.reset();
        }
    }

    /**
     * The job's nodes; unless the scheduler warns this process itself, a backend that sees its nodes'
     * end coming (a Slurm time limit) stops the run gracefully first, as a first Ctrl-C does.
     */
    private static Cluster open(Backend backend, JobSpec spec, Io io, boolean warnedByScheduler) {
        Cluster cluster = Launch.open(backend, spec, io);
        if (!warnedByScheduler) {
            cluster.onEnding(why -> {
                if (io.interrupts().count() == 0) {
                    io.err().println("runjob: " + why);
                    io.interrupts().raise(why);
                }
            });
        }
        return cluster;
    }

    private static int launch(Io io, RunRequest request, SpecLoader.Loaded loaded, LaunchPlan plan, Backend backend, PreflightReport report,
                              Launcher launcher, Map<String, Shipped> shipped, RunStatus status, Optional<RunHandle> handle,
                              NodeStarter fetcher) throws IOException {
        JobSpec spec = plan.spec();
        RunFolder folder = RunFolder.create(Path.of(spec.logsDir()), spec.name(), plan.runId());
        RunIndex.add(io, RunIndex.Entry.here(plan.runId(), spec.name(), io.clock().instant(), folder.dir()));
        folder.writeJob(rebased(loaded));
        folder.writeJson("plan.json", PlanJson.of(plan, backend));
        folder.writeJson("preflight.json", PreflightText.json(report));
        if (!report.environments().isEmpty()) {
            folder.writeJson("environment.json", EnvironmentJson.of(plan, report));
        }
        folder.writeCommand(request.commandLine());
        launcher.withTimeline(new EventsFile(folder.dir(), io.clock()));
        io.err().printf("runjob: %s run %s: %d worker%s on %d node%s, rendezvous %s:%d; logs in %s%n", spec.name(), plan.runId(),
                plan.worldSize(), plan.worldSize() == 1 ? "" : "s", plan.nodes().size(), plan.nodes().size() == 1 ? "" : "s",
                plan.masterAddr(), plan.masterPort().orElse(0), folder.dir());
        RunResult result;
        MetricsLog metrics;
        // with -o json, stdout is the summary alone (for jq): workers' lines go to stderr
        try (OutputRouter router = new OutputRouter(folder.dir(),
                new Console(request.json() ? io.err() : io.out(), Io.colour(io), request.ranks().ranks()))) {
            spec.observe().prometheus().ifPresent(f -> router.metricsLog().exportTo(Path.of(f), spec.name(), plan.runId()));
            router.metricsLog().watch(new StragglerWatch(folder.dir(), spec.observe().stragglerPct(),
                    Duration.ofMillis(Math.round(spec.observe().stragglerWindowSeconds() * 1000)), io.err()::println));
            List<AttemptResult> attempts = launcher.run(plan, router);
            result = new RunResult(spec.name(), plan.runId(), folder.dir(), attempts,
                    Recovery.goodput(attempts, router.metricsLog().progress().useful(), spec.failure().crashLoopSeconds()));
            metrics = router.metricsLog();
        }
        RunOutcome outcome = new RunOutcome(result, RunState.ended(result), request.commandLine(), GitInfo.of(Path.of(request.file())), plan,
                report, shipped, handle, loaded.point(), folder.dir());
        // from the nodes the last attempt ran on: a spare that stood in has the outputs of its place
        JobSpec ran = launcher.lastPlan() == null ? spec : launcher.lastPlan().spec();
        ObjectNode outputs = RunOutputs.collect(ran, fetcher, spec.outputs(), folder.dir().resolve("outputs"), io.err());
        ObjectNode summary = outcome.summary();
        if (!outputs.isEmpty()) {
            summary.set("outputs", outputs);
        }
        MetricsSummary.of(metrics, note -> io.err().println("runjob: note: " + note)).ifPresent(m -> summary.set("metrics", m));
        folder.writeJson(RunFolder.SUMMARY, summary);
        status.write(outcome.state());
        for (var attempt : result.attempts()) {
            for (var rank : attempt.ranks()) {
                if (rank.errorFile().isPresent()) {
                    String name = "error-rank-" + rank.rank() + (attempt.attempt() == 0 ? "" : ".attempt-" + attempt.attempt()) + ".json";
                    Files.writeString(folder.dir().resolve(name), rank.errorFile().get());
                }
            }
        }
        RunReport.print(result, io.err());
        if (request.json()) {
            io.out().println(Json.pretty(summary));
            io.out().flush();
        }
        return outcome.exitCode();
    }

    private static Map<String, Lease.Request> leaseRequests(LaunchPlan plan, PreflightReport report) {
        Map<String, Lease.Request> requests = new LinkedHashMap<>();
        for (var node : plan.nodes()) {
            leaseRequest(node, report, plan).ifPresent(r -> requests.put(node.name(), r));
        }
        return requests;
    }

    /** The lease request of the GPUs {@code node}'s workers use, from what preflight found there; empty when it uses none. */
    private static Optional<Lease.Request> leaseRequest(NodePlan node, PreflightReport report, LaunchPlan plan) {
        var inv = report.gpus().get(node.name());
        if (inv == null || node.visibleDevices().isEmpty()) {
            return Optional.empty();
        }
        List<Integer> visible = Arrays.stream(node.visibleDevices().split(",")).map(String::trim).map(Integer::valueOf).toList();
        return Optional.of(GpuPick.hold(plan.job(), plan.runId(), GpuPick.only(inv, visible).gpus()));
    }

    /**
     * The job as it ran, re-runnable from the run folder: {@code files} name their sources by
     * absolute path (they were relative to the job file, which is elsewhere), and the entrypoint
     * holds the arguments given after {@code --}.
     */
    private static JsonNode rebased(SpecLoader.Loaded loaded) {
        JsonNode json = loaded.document().json();
        if (!(json instanceof ObjectNode o)) {
            return json;
        }
        ObjectNode copy = o.deepCopy();
        if (o.has("files")) {
            var files = copy.putArray("files");
            loaded.spec().files().forEach(f -> files.add(f.source().toAbsolutePath().toString()));
        }
        // the arguments given after -- are part of the job as it ran
        ObjectNode entrypoint = copy.withObjectProperty("entrypoint");
        if (loaded.spec().entrypoint() instanceof EntrypointSpec.Command c) {
            var argv = entrypoint.putArray("command");
            c.argv().forEach(argv::add);
        } else if (loaded.spec().entrypoint() instanceof EntrypointSpec.Jar j && !j.args().isEmpty()) {
            var args = entrypoint.putArray("args");
            j.args().forEach(args::add);
        }
        return copy;
    }

    /**
     * A run refused before anything started (an invalid plan, --ranks outside it) leaves no run
     * behind: its folder goes, unless a detaching or submitting parent made it (that parent removes
     * it). A failed preflight keeps its folder: its runjob.log says what each node answered, and
     * {@code runjob runs} shows it as "preflight failed".
     */
    private static void refused(Path folder, Optional<String> givenRunId) {
        if (givenRunId.isPresent()) {
            return;
        }
        Diagnostics.reset();
        removeRefused(folder);
    }

    /** Removes a refused run's folder. */
    public static void removeRefused(Path folder) {
        try (var all = Files.walk(folder)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            // left for runjob runs to show
        }
    }

    /** An IO failure as a user reads it: what failed where, no exception class names. */
    public static String why(IOException e) {
        if (e instanceof NoSuchFileException n) {
            return "cannot create " + n.getFile() + " there";
        }
        if (e instanceof AccessDeniedException a) {
            return "permission denied for " + a.getFile();
        }
        if (e instanceof FileSystemException f && f.getReason() != null) {
            return f.getReason() + (f.getFile() == null ? "" : " (" + f.getFile() + ")");
        }
        return String.valueOf(e.getMessage());
    }

    public static List<String> command(List<String> args) {
        List<String> out = new ArrayList<>();
        out.add("runjob");
        out.addAll(args);
        return out;
    }
}
