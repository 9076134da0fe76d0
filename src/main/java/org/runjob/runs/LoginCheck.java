package org.runjob.runs;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

import org.runjob.backends.Backends;
import org.runjob.node.Backend;
import org.runjob.node.BatchQueue;
import org.runjob.node.Cluster;
import org.runjob.preflight.Cell;
import org.runjob.preflight.Check;
import org.runjob.preflight.EnvironmentCheck;
import org.runjob.preflight.NodeReport;
import org.runjob.preflight.Preflight;
import org.runjob.protocol.EnvironmentRequest;
import org.runjob.run.Io;
import org.runjob.run.Launch;
import org.runjob.run.RunJob;
import org.runjob.runtime.WorkerRuntimes;
import org.runjob.session.NodeStarter;
import org.runjob.spec.BackendSettings;
import org.runjob.spec.EntrypointSpec;
import org.runjob.spec.JobSpec;
import org.runjob.spec.NodeAddress;
import org.runjob.spec.NodeSpec;

/**
 * Before a run is queued: each environment the job's nodes name (modules, sourced scripts, venv,
 * conda or interpreter, the container image, and the program each worker runs) checked on this
 * machine, the login node, as a node's agent checks it when the run starts, and nothing run
 * (setup commands only say whether they are due). Where the login node shares the compute nodes'
 * software, a missing module system or interpreter is found now instead of after the queue wait.
 *
 * <p>What cannot be checked here is said and not held against the run: a container runtime
 * this machine does not have, and a program that is one of the job's shipped files. What fails
 * refuses the run ({@link BatchQueue.LoginCheck#REFUSE}) or is only said
 * ({@link BatchQueue.LoginCheck#WARN}), as the queue's settings say.
 */
final class LoginCheck {

    /** The name the checked environment's node has in what is said. */
    private static final String HERE = "this machine";

    private LoginCheck() {
    }

    /**
     * True when the runs of {@code specs} (one, or a sweep's points) may be queued, as the
     * queue's {@link BatchQueue#loginCheck} of the first says; what was checked is said on stderr.
     */
    static boolean passes(Io io, List<JobSpec> specs, BatchQueue queue) throws IOException {
        BatchQueue.LoginCheck mode = queue.loginCheck(specs.get(0));
        if (mode == BatchQueue.LoginCheck.OFF) {
            return true;
        }
        boolean ok = true;
        for (Map.Entry<String, List<Map.Entry<JobSpec, NodeSpec>>> e : byEnvironment(specs).entrySet()) {
            List<String> names = e.getValue().stream().map(n -> n.getValue().name()).distinct().toList();
            String nodes = (names.size() == 1 ? "node " : "nodes ") + String.join(", ", names);
            Map.Entry<JobSpec, NodeSpec> first = e.getValue().get(0);
            Optional<String> failed = check(io, first.getKey(), first.getValue(), nodes);
            if (failed.isPresent()) {
                io.err().println("runjob: checked on " + HERE + " before queueing, " + nodes + (names.size() == 1 ? " fails: " : " fail: ")
                        + failed.get().replaceFirst("^runjob: ", ""));
                ok = false;
            }
        }
        if (!ok && mode == BatchQueue.LoginCheck.REFUSE) {
            io.err().println("runjob: nothing is queued; where the nodes have software this machine does not, " + queue.loginCheckKey()
                    + ": warn queues the run anyway and off checks nothing here");
            return false;
        }
        if (!ok) {
            io.err().println("runjob: queued anyway (" + queue.loginCheckKey() + ": warn): the nodes may have what this machine lacks");
        }
        return true;
    }

    /**
     * The nodes of every spec that name an environment, grouped by what is checked of them
     * (environment, variables and program), in the job's order: one check per group. A node
     * without one runs what this machine would find on its PATH, which is no news before queueing.
     */
    private static Map<String, List<Map.Entry<JobSpec, NodeSpec>>> byEnvironment(List<JobSpec> specs) {
        Map<String, List<Map.Entry<JobSpec, NodeSpec>>> groups = new LinkedHashMap<>();
        for (JobSpec spec : specs) {
            for (NodeSpec n : spec.nodes().stream().filter(n -> n.environment().present()).toList()) {
                String key = List.of(n.environment(), n.env(), spec.env(), program(spec)).toString();
                groups.computeIfAbsent(key, k -> new ArrayList<>()).add(Map.entry(spec, n));
            }
        }
        return groups;
    }

    private static String program(JobSpec spec) {
        return spec.entrypoint() instanceof EntrypointSpec.Command c ? c.argv().get(0) : "java";
    }

    /** Checks {@code node}'s environment here; why it fails, or empty (what passed, or could not be checked, is said). */
    private static Optional<String> check(Io io, JobSpec spec, NodeSpec node, String nodes) throws IOException {
        Path workdir = Files.createTempDirectory("runjob-login-check-");
        NodeSpec here = new NodeSpec(node.name(), new NodeAddress.Local(Optional.empty()), new NodeSpec.GpuRequest.Listed(List.of()),
                OptionalInt.of(1), Optional.empty(), node.env(), node.environment());
        JobSpec local = new JobSpec(spec.name(), List.of(here), new JobSpec.RendezvousSpec(here.name(), Optional.empty(),
                new JobSpec.MasterPort.Auto()), spec.entrypoint(), workdir.toString(), true, List.of(), spec.env(), spec.ssh(),
                spec.failure(), spec.logsDir(), spec.metric(), new JobSpec.BackendUse("ssh", BackendSettings.NONE, false), false,
                spec.relay(), spec.source(), List.of(), JobSpec.DEFAULT_OUTPUTS_MAX_BYTES, List.of(), spec.observe(), spec.gpuBind());
        Backend backend = Backends.of(local);
        NodeReport report;
        try (Cluster cluster = Launch.open(backend, local, io);
             Preflight.Outcome checked = Launch.preflight(local, backend, new NodeStarter(local, cluster, io.env(), Optional.empty()),
                     Optional.empty(), Optional.empty(), new PrintStream(OutputStream.nullOutputStream()),
                     EnvironmentRequest.Setup.CHECK, EnvironmentCheck.SetupOutput.NONE, () -> io.interrupts().count() > 0)) {
            report = checked.report().nodes().get(0);
        } finally {
            RunJob.removeRefused(workdir);
        }
        Cell environment = report.cells().getOrDefault(Check.ENVIRONMENT, Cell.skipped());
        Cell program = report.cells().getOrDefault(Check.PROGRAM, Cell.skipped());
        Optional<String> unchecked = uncheckable(spec, node, environment, program);
        if (unchecked.isPresent()) {
            io.err().println("runjob: not checked on " + HERE + " before queueing, " + nodes + ": " + unchecked.get());
            return Optional.empty();
        }
        for (Check c : List.of(Check.JAVA, Check.ENVIRONMENT, Check.PROGRAM)) {
            Cell cell = report.cells().get(c);
            if (cell != null && cell.status() == Cell.Status.FAIL) {
                return Optional.of(cell.text());
            }
        }
        String env = environment.text().equals("ok") || environment.text().isEmpty() ? "" : environment.text() + "; ";
        io.err().println("runjob: checked on " + HERE + " before queueing, " + nodes + ": " + env + program.text());
        return Optional.empty();
    }

    /**
     * What this machine cannot say of the node: its container runtime is not here, or the program
     * is a shipped file (a relative path: the run's files are not here yet).
     */
    private static Optional<String> uncheckable(JobSpec spec, NodeSpec node, Cell environment, Cell program) {
        Optional<String> runtime = node.environment().container().map(c -> WorkerRuntimes.named(c.runtime()).program());
        if (runtime.isPresent() && environment.status() == Cell.Status.FAIL && !onPath(runtime.get())) {
            return Optional.of("its container runtime " + runtime.get() + " is not on this machine's PATH");
        }
        String argv0 = program(spec);
        if (program.status() == Cell.Status.FAIL && argv0.contains("/") && !argv0.startsWith("/")) {
            return Optional.of("its program " + argv0 + " is one of the run's files, which are shipped when it starts");
        }
        return Optional.empty();
    }

    private static boolean onPath(String program) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
                return true;
            }
        }
        return false;
    }
}
